//! The Rust plugin development kit for toolwarden policy plugins (ABI v1,
//! `pdk/ABI.md`): `no_std`, no dependencies, no allocator needed.
//!
//! A plugin is a `cdylib` for `wasm32-unknown-unknown` that declares a
//! [`Plugin`] and exports it with [`export!`]:
//!
//! ```ignore
//! #![no_std]
//! use toolwarden_pdk::{export, no_config, Error, Event, Plugin, Verdict};
//!
//! fn check<'a>(_: &(), ev: &Event<'a>) -> Result<Verdict<'a>, Error<'a>> {
//!     match ev.arguments().get("command").str() {
//!         Some(cmd) if cmd.contains("sudo ") => Ok(Verdict::ask("sudo", "the command runs sudo")),
//!         _ => Ok(Verdict::abstain()),
//!     }
//! }
//!
//! static PLUGIN: Plugin<()> = Plugin::new("no-sudo", "1.0.0", no_config).check(check);
//! export!(PLUGIN);
//! ```
//!
//! What it gives you:
//! - the ABI glue: the `toolwarden_abi_v1` marker, `toolwarden_handle`, the
//!   host imports, reading the input and writing the output;
//! - a lazy JSON reader ([`Value`]): `get` scans an object only up to the key
//!   it looks for, and values are validated as they are scanned;
//! - typed verdicts ([`Verdict`], [`Error`]) and a JSON writer for them;
//! - an arena ([`Alloc`]) reset after every event, so plugins allocate
//!   freely and never free;
//! - a panic handler that logs where the panic happened and traps (feature
//!   `panic-handler`, on by default; turn it off if you link `std`).
//!
//! Lifetimes: an [`Event<'a>`] and everything read from it live for the
//! event (`'a`). The configure function runs once per instance, before its
//! first event; what it reads or allocates is `'static`, so the config type
//! it returns may hold `&'static str`s.

#![no_std]

mod abi;
mod arena;
mod json;
/// Regular expressions, compiled and matched by the host (pdk/ABI.md 16).
pub mod regex;
mod regex_vec;
pub mod shellwords;
mod state;

pub use abi::run;
/// A growable array in the arena, for what configure builds: plugins use it
/// instead of writing their own.
pub use regex_vec::Vec as ArenaVec;
pub use json::{Elements, Kind, Members, MembersBytes, Value, MAX_DEPTH};

/// Events, as numbered by the ABI.
pub const EVENT_DESCRIBE: u32 = 0;
pub const EVENT_LIST: u32 = 1;
pub const EVENT_CHECK: u32 = 2;
pub const EVENT_OBSERVE: u32 = 3;
/// The policy's data file, once per instance (ABI section 13).
pub const EVENT_INIT: u32 = 4;

/// Return codes of `toolwarden_handle` (ABI section 3.1).
pub const OK: u32 = 0;
pub const NOT_HANDLED: u32 = 1;
pub const BAD_INPUT: u32 = 2;
pub const INTERNAL: u32 = 3;
pub const BAD_CONFIG: u32 = 4;

/// A plugin's answer to a check.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Decision {
    Abstain = 0,
    Allow = 1,
    Ask = 2,
    Deny = 3,
}

/// The output of a check (ABI section 5.2).
#[derive(Clone, Copy, Debug)]
pub struct Verdict<'a> {
    pub decision: Decision,
    /// A stable machine code, `[a-z0-9_.:-]{1,64}`; empty means "plugin".
    pub code: &'a str,
    /// Shown to the human.
    pub reason: &'a str,
    /// May an approval of this ask be remembered for the session? Leave it
    /// false when asking because of arguments: the host remembers approvals
    /// per tool, not per argument.
    pub remember: bool,
    /// Session labels to add.
    pub labels: &'a [&'a str],
    /// The arguments the verdict is about: top-level names ("path") or
    /// JSON pointers ("/options/url"). Prompts show them first.
    pub arguments: &'a [&'a str],
    /// Scopes an approval of an ask that is not remembered may be
    /// remembered for: one per argument in `arguments`, at most 4
    /// (pdk/ABI.md 5.2).
    pub scopes: &'a [Scope<'a>],
}

/// An argument scope proposed with an ask: later calls of the same tool
/// definition whose argument at `arg` (a JSON pointer) matches `glob` (an
/// absolute path glob) or `regex` (RE2) are not asked again once the human
/// approves it. Set exactly one of `glob` and `regex`; leave the other "".
#[derive(Clone, Copy, Debug)]
pub struct Scope<'a> {
    pub arg: &'a str,
    pub glob: &'a str,
    pub regex: &'a str,
}

impl<'a> Verdict<'a> {
    pub const fn abstain() -> Self {
        Verdict { decision: Decision::Abstain, code: "", reason: "", remember: false, labels: &[], arguments: &[], scopes: &[] }
    }
    pub const fn allow(code: &'a str, reason: &'a str) -> Self {
        Verdict { decision: Decision::Allow, code, reason, remember: false, labels: &[], arguments: &[], scopes: &[] }
    }
    pub const fn ask(code: &'a str, reason: &'a str) -> Self {
        Verdict { decision: Decision::Ask, code, reason, remember: false, labels: &[], arguments: &[], scopes: &[] }
    }
    pub const fn deny(code: &'a str, reason: &'a str) -> Self {
        Verdict { decision: Decision::Deny, code, reason, remember: false, labels: &[], arguments: &[], scopes: &[] }
    }
    pub const fn remember(mut self, remember: bool) -> Self {
        self.remember = remember;
        self
    }
    pub const fn labels(mut self, labels: &'a [&'a str]) -> Self {
        self.labels = labels;
        self
    }
    pub const fn arguments(mut self, arguments: &'a [&'a str]) -> Self {
        self.arguments = arguments;
        self
    }
    pub const fn scopes(mut self, scopes: &'a [Scope<'a>]) -> Self {
        self.scopes = scopes;
        self
    }
}

/// A failed event: an ABI code (e.g. [`BAD_INPUT`]) and a message for the
/// host's log and the failure reason.
#[derive(Clone, Copy, Debug)]
pub struct Error<'a> {
    pub code: u32,
    pub message: &'a str,
}

impl<'a> Error<'a> {
    pub const fn new(code: u32, message: &'a str) -> Self {
        Error { code, message }
    }
    pub const fn bad_input(message: &'a str) -> Self {
        Error { code: BAD_INPUT, message }
    }
    pub const fn bad_config(message: &'a str) -> Self {
        Error { code: BAD_CONFIG, message }
    }
    pub const fn internal(message: &'a str) -> Self {
        Error { code: INTERNAL, message }
    }
}

/// One event's input (ABI section 4): a JSON object read lazily.
///
/// `call` and `session` are found once per event and kept: a plugin that
/// reads several keys under them scans the envelope's first keys once.
pub struct Event<'a> {
    event: u32,
    input: Value<'a>,
    call: core::cell::Cell<Option<Value<'a>>>,
    session: core::cell::Cell<Option<Value<'a>>>,
}

impl<'a> Event<'a> {
    pub(crate) fn new(event: u32, input: Value<'a>) -> Self {
        Event { event, input, call: core::cell::Cell::new(None), session: core::cell::Cell::new(None) }
    }
    /// The event number ([`EVENT_CHECK`], ...).
    pub fn kind(&self) -> u32 {
        self.event
    }
    /// The whole input envelope.
    pub fn input(&self) -> Value<'a> {
        self.input
    }
    /// A top-level key of the envelope.
    pub fn get(&self, key: &str) -> Value<'a> {
        self.input.get(key)
    }
    /// `call` (check and observe).
    pub fn call(&self) -> Value<'a> {
        cached(&self.call, || self.input.get("call"))
    }
    /// `call.arguments`, as the client sent them.
    pub fn arguments(&self) -> Value<'a> {
        self.call().get("arguments")
    }
    /// `call.tool.name`, or "".
    pub fn tool_name(&self) -> &'a str {
        self.call().get("tool").get("name").str().unwrap_or("")
    }
    /// `session`.
    pub fn session(&self) -> Value<'a> {
        cached(&self.session, || self.input.get("session"))
    }
    /// Whether the session carries a label.
    pub fn has_label(&self, label: &str) -> bool {
        self.session().get("labels").elements().any(|v| v.str_eq(label))
    }
    /// Memory for this event.
    pub fn alloc(&self) -> Alloc<'a> {
        Alloc::new()
    }
}

fn cached<'a>(slot: &core::cell::Cell<Option<Value<'a>>>, find: impl FnOnce() -> Value<'a>) -> Value<'a> {
    match slot.get() {
        Some(v) => v,
        None => {
            let v = find();
            slot.set(Some(v));
            v
        }
    }
}

/// Allocates in the arena, for as long as `'a` (the event, or the instance
/// inside configure).
#[derive(Clone, Copy)]
pub struct Alloc<'a> {
    _life: core::marker::PhantomData<&'a ()>,
}

impl<'a> Alloc<'a> {
    pub(crate) fn new() -> Self {
        Alloc { _life: core::marker::PhantomData }
    }
    /// `n` zeroed bytes.
    pub fn bytes(&self, n: usize) -> &'a mut [u8] {
        let b = arena::bytes(n);
        b.fill(0);
        b
    }
    /// The concatenation of `parts`.
    pub fn concat(&self, parts: &[&str]) -> &'a str {
        let mut s = self.string();
        for p in parts {
            s.push_str(p);
        }
        s.as_str()
    }
    /// A string builder.
    pub fn string(&self) -> StrBuf<'a> {
        StrBuf { buf: arena::Buf::new() }
    }
}

/// A string being built in the arena.
pub struct StrBuf<'a> {
    buf: arena::Buf<'a>,
}

impl<'a> StrBuf<'a> {
    pub fn push_str(&mut self, s: &str) {
        self.buf.push(s.as_bytes());
    }
    pub fn push(&mut self, c: char) {
        let mut tmp = [0u8; 4];
        self.buf.push(c.encode_utf8(&mut tmp).as_bytes());
    }
    pub fn len(&self) -> usize {
        self.buf.len()
    }
    pub fn is_empty(&self) -> bool {
        self.buf.len() == 0
    }
    /// Appends s as a JSON string, as the Go kit's `pdk.Quote` writes it:
    /// `"`, `\\`, `\n`, `\t` and `\r` escaped, other control bytes as `\u00XX`,
    /// each byte of invalid UTF-8 as `\ufffd`.
    pub fn push_quoted(&mut self, s: &[u8]) {
        self.push('"');
        let mut rest = s;
        loop {
            match core::str::from_utf8(rest) {
                Ok(v) => {
                    self.push_quoted_str(v);
                    break;
                }
                Err(e) => {
                    let (good, bad) = rest.split_at(e.valid_up_to());
                    self.push_quoted_str(unsafe { core::str::from_utf8_unchecked(good) });
                    self.push_str("\\ufffd");
                    rest = &bad[1..];
                }
            }
        }
        self.push('"');
    }
    /// Appends n in decimal (without core::fmt, which costs code size).
    pub fn push_uint(&mut self, mut n: usize) {
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        self.buf.push(&digits[i..]);
    }
    fn push_quoted_str(&mut self, s: &str) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut start = 0;
        for (i, c) in s.bytes().enumerate() {
            let esc: &str = match c {
                b'"' => "\\\"",
                b'\\' => "\\\\",
                b'\n' => "\\n",
                b'\t' => "\\t",
                b'\r' => "\\r",
                0..=0x1f => "",
                _ => continue,
            };
            self.push_str(&s[start..i]);
            if esc.is_empty() {
                self.push_str("\\u00");
                self.push(HEX[(c >> 4) as usize] as char);
                self.push(HEX[(c & 0xf) as usize] as char);
            } else {
                self.push_str(esc);
            }
            start = i + 1;
        }
        self.push_str(&s[start..]);
    }
    pub fn as_str(self) -> &'a str {
        // Only whole &strs and chars were pushed.
        unsafe { core::str::from_utf8_unchecked(self.buf.into_bytes()) }
    }
}

impl<'a> core::fmt::Write for StrBuf<'a> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        self.push_str(s);
        Ok(())
    }
}

/// The labels an observe adds, or the tools a list hides. (`push` takes
/// `&self`: Rust 1.63 const fns cannot name `&mut` in fn pointer types.)
pub struct Names<'a> {
    items: core::cell::UnsafeCell<arena::Buf<'a>>,
    n: core::cell::Cell<usize>,
}

impl<'a> Names<'a> {
    pub(crate) fn new() -> Self {
        Names { items: core::cell::UnsafeCell::new(arena::Buf::new()), n: core::cell::Cell::new(0) }
    }
    pub fn push(&self, name: &str) {
        // Names is neither Sync nor handed out by reference across pushes.
        let items = unsafe { &mut *self.items.get() };
        if self.n.get() > 0 {
            items.byte(b',');
        }
        self.n.set(self.n.get() + 1);
        json::write_string(items, name);
    }
    pub fn len(&self) -> usize {
        self.n.get()
    }
    pub fn is_empty(&self) -> bool {
        self.n.get() == 0
    }
    pub(crate) fn into_bytes(self) -> &'a [u8] {
        self.items.into_inner().into_bytes()
    }
}

/// Checks a call.
pub type CheckFn<C> = for<'a> fn(&'static C, &Event<'a>) -> Result<Verdict<'a>, Error<'a>>;
/// Observes a call, or filters a tool list, adding names.
pub type NamesFn<C> = for<'a> fn(&'static C, &Event<'a>, &Names<'a>) -> Result<(), Error<'a>>;
/// Reads the policy's config (an object, `{}` when the user gave none) once
/// per instance. An error refuses the config: every event then fails with
/// it (code [`BAD_CONFIG`] unless the error says otherwise), and at load
/// the plugin is refused.
pub type ConfigureFn<C> = fn(Value<'static>, Alloc<'static>) -> Result<C, Error<'static>>;

/// A plugin: its name, version and handlers. Leave a handler `None` for an
/// event the plugin does not handle; describe is answered for you.
pub struct Plugin<C: 'static> {
    pub name: &'static str,
    pub version: &'static str,
    pub configure: ConfigureFn<C>,
    pub check: Option<CheckFn<C>>,
    pub observe: Option<NamesFn<C>>,
    pub list: Option<NamesFn<C>>,
    /// Asks for per-session state (pdk/ABI.md section 12; `state.rs`).
    pub state: bool,
    /// Receives the policy's data file once per instance (section 13).
    pub data: Option<DataFn>,
    /// The input parts the plugin reads (section 14), `None` for all.
    pub needs: Option<&'static [&'static str]>,
    /// Check's verdict depends on its input alone (section 15).
    pub deterministic: bool,
}

/// Reads the policy's data file (JSON; null when the policy has none) once
/// per instance, before its first other event; what it reads or allocates
/// is `'static`. An error fails the instance.
pub type DataFn = fn(Value<'static>, Alloc<'static>) -> Result<(), Error<'static>>;

impl<C: 'static> Plugin<C> {
    pub const fn new(name: &'static str, version: &'static str, configure: ConfigureFn<C>) -> Self {
        Plugin { name, version, configure, check: None, observe: None, list: None, state: false, data: None, needs: None, deterministic: false }
    }
    pub const fn check(mut self, f: CheckFn<C>) -> Self {
        self.check = Some(f);
        self
    }
    pub const fn observe(mut self, f: NamesFn<C>) -> Self {
        self.observe = Some(f);
        self
    }
    pub const fn list(mut self, f: NamesFn<C>) -> Self {
        self.list = Some(f);
        self
    }
    /// Asks for per-session state: [`Event::counter`], [`Event::add`], ...
    pub const fn stateful(mut self) -> Self {
        self.state = true;
        self
    }
    /// Receives the policy's data file: [`DataFn`].
    pub const fn data(mut self, f: DataFn) -> Self {
        self.data = Some(f);
        self
    }
    /// Names the input parts the plugin reads (pdk/ABI.md section 14:
    /// "labels", "capabilities", "tool", "arguments", ...): the host then
    /// sends only those. The kit reads the config once per instance, so
    /// leave "config" out unless a handler reads `plugin.config` itself:
    /// without it, describe lists init and every instance gets its config
    /// there, before its first other event.
    pub const fn needs(mut self, parts: &'static [&'static str]) -> Self {
        self.needs = Some(parts);
        self
    }
    /// Promises that check's verdict depends on nothing but its input
    /// (pdk/ABI.md section 15): no counters, clocks or randomness. The
    /// host may then answer an input identical to the last one without
    /// calling the plugin.
    pub const fn deterministic(mut self) -> Self {
        self.deterministic = true;
        self
    }
    /// Whether describe lists init: for the data file, or to hand the
    /// config to every instance of a plugin that does not need it per event.
    pub(crate) fn wants_init(&self) -> bool {
        self.data.is_some() || matches!(self.needs, Some(n) if !n.iter().any(|&p| p == "config" || p == "plugin"))
    }
}

/// The configure function of a plugin without config.
pub fn no_config(_: Value<'static>, _: Alloc<'static>) -> Result<(), Error<'static>> {
    Ok(())
}

/// Log levels of [`log`].
#[derive(Clone, Copy)]
pub enum Level {
    Debug = 0,
    Info = 1,
    Warn = 2,
    Error = 3,
}

/// Writes a message to the host's log (capped by the host).
pub fn log(level: Level, msg: &str) {
    abi::log(level as u32, msg.as_bytes())
}

/// Defines the plugin's exports (`toolwarden_abi_v1`, `toolwarden_handle`)
/// for a `static` [`Plugin`]. Use it once, in the cdylib crate.
#[macro_export]
macro_rules! export {
    ($plugin:path) => {
        #[no_mangle]
        pub extern "C" fn toolwarden_abi_v1() {}

        #[no_mangle]
        pub extern "C" fn toolwarden_handle(event: u32, input_len: u32) -> u32 {
            $crate::run(&$plugin, event, input_len)
        }
    };
}
