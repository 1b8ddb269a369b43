//! The ABI glue: host imports, toolwarden_handle's body, the panic handler.

use crate::arena::{self, Buf};
use crate::json::{self, Value};
use crate::{Alloc, Error, Event, Names, Plugin};
use core::ptr;

#[cfg(target_arch = "wasm32")]
#[link(wasm_import_module = "toolwarden")]
extern "C" {
    fn input_read(dst: *mut u8, len: u32) -> u32;
    fn output_write(src: *const u8, len: u32) -> u32;
    #[link_name = "log"]
    fn host_log(level: u32, ptr: *const u8, len: u32);
}

// Native builds (unit tests of plugin logic) have no host.
#[cfg(not(target_arch = "wasm32"))]
unsafe fn input_read(_: *mut u8, _: u32) -> u32 {
    0
}
#[cfg(not(target_arch = "wasm32"))]
unsafe fn output_write(_: *const u8, _: u32) -> u32 {
    0
}
#[cfg(not(target_arch = "wasm32"))]
unsafe fn host_log(_: u32, _: *const u8, _: u32) {}

pub(crate) fn log(level: u32, msg: &[u8]) {
    unsafe { host_log(level, msg.as_ptr(), msg.len() as u32) }
}

/// Logs `msg` at error level and traps: the event fails and the host
/// discards the instance.
pub(crate) fn trap(msg: &str) -> ! {
    log(3, msg.as_bytes());
    #[cfg(target_arch = "wasm32")]
    core::arch::wasm32::unreachable();
    #[cfg(not(target_arch = "wasm32"))]
    panic!("{}", msg);
}

/// The instance's configuration state, set by its first event.
struct State {
    configured: bool,
    configuring: bool,
    config: *const (),
    code: u32,
    message: &'static str,
    // The config document, to catch decoding it after configure.
    config_start: usize,
    config_end: usize,
}

static mut STATE: State = State {
    configured: false,
    configuring: false,
    config: ptr::null(),
    code: 0,
    message: "",
    config_start: 0,
    config_end: 0,
};

/// Decoding a config string allocates; outside configure that memory would
/// be freed after the event while the string claims to live forever.
pub(crate) fn check_decode(body: &[u8]) {
    unsafe {
        let s = &*ptr::addr_of!(STATE);
        let p = body.as_ptr() as usize;
        if !s.configuring && p >= s.config_start && p < s.config_end {
            trap("toolwarden_pdk: read escaped config strings in configure and keep the results; a Value of the config cannot decode them later");
        }
    }
}

const DECISIONS: [&str; 4] = ["abstain", "allow", "ask", "deny"];

/// toolwarden_handle: runs one event. `export!` calls it.
pub fn run<C: 'static>(p: &'static Plugin<C>, event: u32, input_len: u32) -> u32 {
    let input = arena::bytes(input_len as usize);
    let mut n = 0usize;
    while n < input.len() {
        let got = unsafe { input_read(input[n..].as_mut_ptr(), (input.len() - n) as u32) } as usize;
        if got == 0 {
            break;
        }
        n += got;
    }
    // The input lives in the arena: for this event, or (when it configures
    // the instance) forever.
    let input: &'static [u8] = unsafe { core::slice::from_raw_parts(input.as_ptr(), n) };
    let mut out = Buf::new();
    let mut configuring = false;
    crate::state::begin();
    let code = handle(p, event, input, &mut out, &mut configuring);
    let out = crate::state::end(p.state, event, code, out);
    let bytes = out.into_bytes();
    let mut code = code;
    if !bytes.is_empty() && unsafe { output_write(bytes.as_ptr(), bytes.len() as u32) } != 0 {
        code = crate::INTERNAL;
    }
    if configuring {
        arena::keep();
    } else {
        arena::reset();
    }
    code
}

fn handle<C: 'static>(p: &'static Plugin<C>, event: u32, input: &'static [u8], out: &mut Buf, configuring: &mut bool) -> u32 {
    let start = json::ws(input, 0);
    if input.get(start) != Some(&b'{') {
        out.push(b"input is not a JSON object");
        return crate::BAD_INPUT;
    }
    let root = Value::new(&input[start..]);
    let state = unsafe { &mut *ptr::addr_of_mut!(STATE) };
    if !state.configured {
        *configuring = true;
        configure(p, root, state);
    }
    if state.code != 0 {
        out.push(state.message.as_bytes());
        return state.code;
    }
    let config: &'static C = unsafe { &*(state.config as *const C) };
    let ev = Event::new(event, root);
    match event {
        crate::EVENT_DESCRIBE => {
            out.push(b"{\"name\":");
            json::write_string(out, p.name);
            out.push(b",\"version\":");
            json::write_string(out, p.version);
            out.push(b",\"events\":[");
            let mut n = 0;
            for (name, on) in [("list", p.list.is_some()), ("check", p.check.is_some()), ("observe", p.observe.is_some()), ("init", p.wants_init())] {
                if on {
                    if n > 0 {
                        out.byte(b',');
                    }
                    n += 1;
                    json::write_string(out, name);
                }
            }
            out.byte(b']');
            if let Some(needs) = p.needs {
                out.push(b",\"needs\":[");
                for (i, part) in needs.iter().enumerate() {
                    if i > 0 {
                        out.byte(b',');
                    }
                    json::write_string(out, part);
                }
                out.byte(b']');
            }
            if p.deterministic {
                out.push(b",\"deterministic\":true");
            }
            out.byte(b'}');
            crate::OK
        }
        crate::EVENT_CHECK => {
            let f = match p.check {
                Some(f) => f,
                None => return crate::NOT_HANDLED,
            };
            match f(config, &ev) {
                Err(e) => fail(out, e),
                Ok(v) => {
                    out.push(b"{\"decision\":\"");
                    out.push(DECISIONS[v.decision as usize].as_bytes());
                    out.byte(b'"');
                    if !v.code.is_empty() {
                        out.push(b",\"code\":");
                        json::write_string(out, v.code);
                    }
                    if !v.reason.is_empty() {
                        out.push(b",\"reason\":");
                        json::write_string(out, v.reason);
                    }
                    if v.remember {
                        out.push(b",\"remember\":true");
                    }
                    if !v.labels.is_empty() {
                        out.push(b",\"labels\":[");
                        for (i, l) in v.labels.iter().enumerate() {
                            if i > 0 {
                                out.byte(b',');
                            }
                            json::write_string(out, l);
                        }
                        out.byte(b']');
                    }
                    if !v.arguments.is_empty() {
                        out.push(b",\"arguments\":[");
                        for (i, a) in v.arguments.iter().enumerate() {
                            if i > 0 {
                                out.byte(b',');
                            }
                            json::write_string(out, a);
                        }
                        out.byte(b']');
                    }
                    if !v.scopes.is_empty() {
                        out.push(b",\"scopes\":[");
                        for (i, sc) in v.scopes.iter().enumerate() {
                            if i > 0 {
                                out.byte(b',');
                            }
                            out.push(b"{\"arg\":");
                            json::write_string(out, sc.arg);
                            if !sc.glob.is_empty() {
                                out.push(b",\"glob\":");
                                json::write_string(out, sc.glob);
                            }
                            if !sc.regex.is_empty() {
                                out.push(b",\"regex\":");
                                json::write_string(out, sc.regex);
                            }
                            out.byte(b'}');
                        }
                        out.byte(b']');
                    }
                    out.byte(b'}');
                    crate::OK
                }
            }
        }
        crate::EVENT_OBSERVE | crate::EVENT_LIST => {
            let f = match if event == crate::EVENT_LIST { p.list } else { p.observe } {
                Some(f) => f,
                None => return crate::NOT_HANDLED,
            };
            let names = Names::new();
            match f(config, &ev, &names) {
                Err(e) => fail(out, e),
                Ok(()) => {
                    if !names.is_empty() {
                        out.push(if event == crate::EVENT_LIST { b"{\"hide\":[" } else { b"{\"labels\":[" });
                        out.push(names.into_bytes());
                        out.push(b"]}");
                    }
                    crate::OK
                }
            }
        }
        crate::EVENT_INIT => {
            let f = match p.data {
                Some(f) => f,
                // Listed only to configure the instance, done above.
                None => return if p.wants_init() { crate::OK } else { crate::NOT_HANDLED },
            };
            // The data's memory lives on, as the config's does.
            *configuring = true;
            match f(root.get("data"), crate::Alloc::new()) {
                Err(e) => fail(out, e),
                Ok(()) => crate::OK,
            }
        }
        _ => crate::NOT_HANDLED,
    }
}

fn fail(out: &mut Buf, e: Error) -> u32 {
    out.push(e.message.as_bytes());
    if e.code == crate::OK || e.code == crate::NOT_HANDLED {
        crate::INTERNAL
    } else {
        e.code
    }
}

fn configure<C: 'static>(p: &'static Plugin<C>, root: Value<'static>, state: &mut State) {
    state.configured = true;
    let cfg = root.get("plugin").get("config");
    let raw: &'static [u8] = if cfg.exists() {
        match cfg.raw() {
            Some(r) => r,
            None => {
                state.code = crate::BAD_CONFIG;
                state.message = "config is not valid JSON";
                return;
            }
        }
    } else if p.needs.is_some() && !root.get("plugin").exists() {
        // A plugin that declared needs without "config" is configured at
        // init, which always carries the plugin block; without it, reading
        // "{}" would run the plugin on a config the user did not write.
        state.code = crate::INTERNAL;
        state.message = "toolwarden_pdk: the instance's first event carried no plugin config (the host must send init first: pdk/ABI.md section 14)";
        return;
    } else {
        b"{}"
    };
    state.config_start = raw.as_ptr() as usize;
    state.config_end = state.config_start + raw.len();
    state.configuring = true;
    let result = (p.configure)(Value::new(raw), Alloc::new());
    state.configuring = false;
    match result {
        Ok(c) => {
            let slot = arena::alloc(core::mem::size_of::<C>().max(1)) as *mut C;
            // The arena is 8-aligned; configs that need more are rare
            // enough to refuse loudly.
            if core::mem::align_of::<C>() > 8 {
                trap("toolwarden_pdk: config types must not need more than 8-byte alignment");
            }
            unsafe { slot.write(c) };
            state.config = slot as *const ();
        }
        Err(e) => {
            state.code = if e.code == crate::OK || e.code == crate::NOT_HANDLED { crate::BAD_CONFIG } else { e.code };
            state.message = e.message;
        }
    }
}

#[cfg(all(target_arch = "wasm32", feature = "panic-handler", not(test)))]
#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    // Log where, without core::fmt (which would add kilobytes to every
    // plugin): "panic at src/lib.rs:12".
    let mut b = [0u8; 200];
    let mut n = 0;
    let mut put = |s: &[u8]| {
        for &c in s {
            if n < b.len() {
                b[n] = c;
                n += 1;
            }
        }
    };
    put(b"panic");
    if let Some(l) = info.location() {
        put(b" at ");
        put(l.file().as_bytes());
        put(b":");
        let mut digits = [0u8; 10];
        let mut i = digits.len();
        let mut line = l.line();
        loop {
            i -= 1;
            digits[i] = b'0' + (line % 10) as u8;
            line /= 10;
            if line == 0 {
                break;
            }
        }
        put(&digits[i..]);
    }
    log(3, &b[..n]);
    core::arch::wasm32::unreachable()
}
