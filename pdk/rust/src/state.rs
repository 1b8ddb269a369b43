//! Session state (pdk/ABI.md section 12). A plugin built with
//! [`Plugin::stateful`] gets its per-session counters and entries in every
//! check and observe, and may change them; the host keeps them in its
//! session (they outlive any instance) and applies a check's changes before
//! the next check of the same session runs the plugin:
//!
//! ```ignore
//! fn check<'a>(_: &(), ev: &Event<'a>) -> Result<Verdict<'a>, Error<'a>> {
//!     if ev.counter("calls") >= 2 {
//!         return Ok(Verdict::ask("budget_spent", "2 calls already ran in this session"));
//!     }
//!     ev.add("calls", 1);
//!     Ok(Verdict::abstain())
//! }
//! ```
//!
//! Bounds per plugin per session: 64 keys, keys of 1-256 bytes, values of
//! at most 1024 bytes; an update over one fails the event (on_error
//! applies).

use core::ptr;

use crate::arena::Buf;
use crate::json;
use crate::{Event, Value};

/// The changes of the current event, in the arena (reset with it).
struct Changes {
    add: Buf<'static>,
    set: Buf<'static>,
    del: Buf<'static>,
}

static mut CHANGES: Option<Changes> = None;

fn changes() -> &'static mut Changes {
    unsafe {
        let c = &mut *ptr::addr_of_mut!(CHANGES);
        c.get_or_insert_with(|| Changes { add: Buf::new(), set: Buf::new(), del: Buf::new() })
    }
}

/// Forgets the previous event's changes (their memory was the arena's).
pub(crate) fn begin() {
    unsafe { *ptr::addr_of_mut!(CHANGES) = None }
}

impl<'a> Event<'a> {
    /// The plugin's session state: `{"counters":{..},"entries":{..}}`.
    pub fn state(&self) -> Value<'a> {
        self.input.get("state")
    }
    /// Counter `key`, 0 when it does not exist.
    pub fn counter(&self, key: &str) -> i64 {
        let v = self.state().get("counters").get(key);
        match v.raw().and_then(|b| core::str::from_utf8(b).ok()) {
            Some(s) => s.parse::<i64>().unwrap_or(0),
            None => 0,
        }
    }
    /// Entry `key`, if it exists.
    pub fn entry(&self, key: &str) -> Option<&'a str> {
        self.state().get("entries").get(key).str()
    }
    /// Adds `n` (may be negative) to counter `key`; a counter that does not
    /// exist starts at 0. Add once per key per event: a JSON key given
    /// twice counts once (the last).
    pub fn add(&self, key: &str, n: i64) {
        let c = changes();
        if c.add.len() > 0 {
            c.add.byte(b',');
        }
        json::write_string(&mut c.add, key);
        c.add.byte(b':');
        write_i64(&mut c.add, n);
    }
    /// Sets entry `key` to `value`.
    pub fn set(&self, key: &str, value: &str) {
        let c = changes();
        if c.set.len() > 0 {
            c.set.byte(b',');
        }
        json::write_string(&mut c.set, key);
        c.set.byte(b':');
        json::write_string(&mut c.set, value);
    }
    /// Deletes counter or entry `key` (a counter so reset starts again at
    /// 0). Deletes apply before adds and sets.
    pub fn delete(&self, key: &str) {
        let c = changes();
        if c.del.len() > 0 {
            c.del.byte(b',');
        }
        json::write_string(&mut c.del, key);
    }
}

fn write_i64(b: &mut Buf, n: i64) {
    let mut d = [0u8; 24];
    let mut i = d.len();
    let mut u = n.unsigned_abs();
    loop {
        i -= 1;
        d[i] = b'0' + (u % 10) as u8;
        u /= 10;
        if u == 0 {
            break;
        }
    }
    if n < 0 {
        i -= 1;
        d[i] = b'-';
    }
    b.push(&d[i..]);
}

/// Adds member to the JSON object in `out` (or makes one of it).
fn member<'a>(out: Buf<'a>, parts: &[&[u8]]) -> Buf<'a> {
    let old = out.into_bytes();
    let mut b = Buf::new();
    if old.last() == Some(&b'}') {
        b.push(&old[..old.len() - 1]);
        if old.len() > 1 && old[old.len() - 2] != b'{' {
            b.byte(b',');
        }
    } else {
        b.byte(b'{');
    }
    for p in parts {
        b.push(p);
    }
    b.byte(b'}');
    b
}

/// Asks for state in describe, and sends the event's changes with a check
/// or observe output.
pub(crate) fn end<'a>(stateful: bool, event: u32, code: u32, out: Buf<'a>) -> Buf<'a> {
    if !stateful || code != crate::OK {
        return out;
    }
    if event == crate::EVENT_DESCRIBE {
        return member(out, &[b"\"state\":true"]);
    }
    if event != crate::EVENT_CHECK && event != crate::EVENT_OBSERVE {
        return out;
    }
    let c = unsafe { (*ptr::addr_of_mut!(CHANGES)).take() };
    let c = match c {
        Some(c) if c.add.len() + c.set.len() + c.del.len() > 0 => c,
        _ => return out,
    };
    let mut b = Buf::new();
    b.push(b"\"state\":{");
    let mut n = 0;
    if c.add.len() > 0 {
        b.push(b"\"add\":{");
        b.push(c.add.into_bytes());
        b.byte(b'}');
        n += 1;
    }
    if c.set.len() > 0 {
        if n > 0 {
            b.byte(b',');
        }
        b.push(b"\"set\":{");
        b.push(c.set.into_bytes());
        b.byte(b'}');
        n += 1;
    }
    if c.del.len() > 0 {
        if n > 0 {
            b.byte(b',');
        }
        b.push(b"\"delete\":[");
        b.push(c.del.into_bytes());
        b.byte(b']');
    }
    b.byte(b'}');
    member(out, &[b.into_bytes()])
}
