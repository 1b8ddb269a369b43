//! A test plugin that runs the kit's helpers (regexps through the host's
//! imports, the shell-word splitter) on pdk/testdata/regex.json and
//! shellwords.json inside the real host:
//! examples/plugins/helpers_test.go loads it with every pattern in its
//! config and asks one case per check.
//!
//! Config: {"patterns": ["...", ...]}, compiled in configure.
//! Check arguments: {"pattern": i, "input": "..."} answers allow "match",
//! deny "nomatch", or deny "error" with the compile error as the reason;
//! {"line": "..."} answers allow "words" with each word as
//! <UTF-8 length>:<word>, or deny "error" with the refusal.
#![no_std]

use toolwarden_pdk::regex::{self, Regex};
use toolwarden_pdk::shellwords::split_words;
use toolwarden_pdk::{export, Alloc, Error, Event, Plugin, Value, Verdict};

#[derive(Clone, Copy)]
enum Compiled {
    Ok(Regex),
    Err(&'static str),
}

struct Config {
    patterns: &'static [Compiled],
}

fn configure(cfg: Value<'static>, alloc: Alloc<'static>) -> Result<Config, Error<'static>> {
    let list = cfg.get("patterns");
    let n = list.elements().count();
    let raw = alloc.bytes(n * core::mem::size_of::<Compiled>());
    let patterns = unsafe { core::slice::from_raw_parts_mut(raw.as_mut_ptr() as *mut Compiled, n) };
    for (i, p) in list.elements().enumerate() {
        let p = p.str().ok_or(Error::bad_config("patterns: want strings"))?;
        patterns[i] = match regex::compile(p, alloc) {
            Ok(re) => Compiled::Ok(re),
            Err(e) => Compiled::Err(e.message(alloc)),
        };
    }
    Ok(Config { patterns })
}

fn check<'a>(cfg: &'static Config, ev: &Event<'a>) -> Result<Verdict<'a>, Error<'a>> {
    let args = ev.arguments();
    if let Some(line) = args.get("line").str() {
        let alloc = ev.alloc();
        return Ok(match split_words(line, alloc) {
            Ok(words) => {
                let mut s = alloc.string();
                for w in words {
                    push_number(&mut s, w.len());
                    s.push(':');
                    s.push_str(w);
                }
                Verdict::allow("words", s.as_str())
            }
            Err(e) => Verdict::deny("error", e.message(alloc)),
        });
    }
    let i = args.get("pattern").f64().ok_or(Error::bad_input("want \"line\" or \"pattern\""))? as usize;
    let input = args.get("input").str().unwrap_or("");
    Ok(match cfg.patterns.get(i) {
        Some(Compiled::Ok(re)) if re.is_match(input.as_bytes()) => Verdict::allow("match", ""),
        Some(Compiled::Ok(_)) => Verdict::deny("nomatch", ""),
        Some(Compiled::Err(msg)) => Verdict::deny("error", msg),
        None => return Err(Error::bad_input("pattern index out of range")),
    })
}

fn push_number(s: &mut toolwarden_pdk::StrBuf<'_>, mut n: usize) {
    let mut d = [0u8; 20];
    let mut i = d.len();
    loop {
        i -= 1;
        d[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &c in &d[i..] {
        s.push(c as char);
    }
}

static PLUGIN: Plugin<Config> = Plugin::new("vectors", "1.0.0", configure).check(check);
export!(PLUGIN);
