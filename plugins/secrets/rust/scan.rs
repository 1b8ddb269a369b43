//! The scanner, a line-by-line port of ../scan.go, ../named.go and
//! ../classes.go (read those for the why of each rule): one pass over the
//! text, each detector reading a bounded window or a maximal run of a class
//! it refuses to start inside, so the scan is linear in the text.

use crate::Config;

pub const AWS_ACCESS_KEY: u32 = 0;
pub const AWS_SECRET_KEY: u32 = 1;
pub const GCP_SERVICE_ACCOUNT: u32 = 2;
pub const AZURE_STORAGE_KEY: u32 = 3;
pub const GITHUB_TOKEN: u32 = 4;
pub const SLACK_TOKEN: u32 = 5;
pub const SLACK_WEBHOOK: u32 = 6;
pub const PRIVATE_KEY: u32 = 7;
pub const JWT: u32 = 8;
pub const STRIPE_KEY: u32 = 9;
pub const OPENAI_KEY: u32 = 10;
pub const ANTHROPIC_KEY: u32 = 11;
pub const NAMED_SECRET: u32 = 12;
pub const BUILTIN_KINDS: u32 = 13;

/// The bytes at which a detector may match (../scan.go, starts).
pub const STARTS: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    let set = b"ASgxkJ-=:";
    while i < set.len() {
        t[set[i] as usize] = true;
        i += 1;
    }
    t
};

impl Config {
    fn found(&self, k: u32, token: &[u8]) -> u32 {
        if self.disabled & (1 << k) != 0 {
            return 0;
        }
        if self.allow[..self.n_allow].iter().any(|a| *a == token) {
            return 0;
        }
        1 << k
    }

    pub fn scan(&self, s: &[u8]) -> u32 {
        let mut m = 0;
        let st = &self.starts;
        let mut i = 0;
        while i < s.len() {
            // Eight bytes a step past text no detector starts in: every
            // loop iteration in a guest pays for the host's deadline check.
            if i + 8 <= s.len() {
                let c = &s[i..i + 8];
                if !(st[c[0] as usize] | st[c[1] as usize] | st[c[2] as usize] | st[c[3] as usize]
                    | st[c[4] as usize] | st[c[5] as usize] | st[c[6] as usize] | st[c[7] as usize])
                {
                    i += 8;
                    continue;
                }
            }
            let b = s[i];
            i += 1;
            if !st[b as usize] {
                continue;
            }
            let i = i - 1;
            match b {
                b'A' => {
                    m |= self.aws_key_id(s, i);
                    if has(s, i, b"AccountKey=") && !prev_is(s, i, is_alnum) {
                        m |= self.azure(s, i + 11);
                    }
                }
                b'S' => {
                    if has(s, i, b"SharedAccessKey=") && !prev_is(s, i, is_alnum) {
                        m |= self.azure(s, i + 16);
                    }
                }
                b'g' => m |= self.github(s, i),
                b'x' => m |= self.slack(s, i),
                b'k' => {
                    if i >= 1 && (s[i - 1] == b's' || s[i - 1] == b'r') {
                        m |= self.sk_key(s, i - 1);
                    }
                    if i >= 3 && has(s, i - 3, b"hooks.slack.com/services/") {
                        let j = i - 3 + 25;
                        let e = run(s, j, is_alnum_slash);
                        if e - j >= 30 {
                            m |= self.found(SLACK_WEBHOOK, &s[i - 3..e]);
                        }
                    }
                }
                b'-' => m |= self.pem(s, i),
                b'J' => {
                    if i >= 2 {
                        m |= self.jwt(s, i - 2);
                    }
                }
                b'=' | b':' => m |= self.assignment(s, i),
                _ => {}
            }
            if self.firsts[b as usize] {
                m |= self.prefixed(s, i);
            }
        }
        m
    }

    fn aws_key_id(&self, s: &[u8], i: usize) -> u32 {
        if !(has(s, i, b"AKIA") || has(s, i, b"ASIA")) || prev_is(s, i, is_alnum) || i + 20 > s.len() {
            return 0;
        }
        if !s[i + 4..i + 20].iter().all(|&b| is_upper_digit(b)) {
            return 0;
        }
        if i + 20 < s.len() && is_alnum(s[i + 20]) {
            return 0;
        }
        self.found(AWS_ACCESS_KEY, &s[i..i + 20])
    }

    fn azure(&self, s: &[u8], j: usize) -> u32 {
        let mut e = run(s, j, is_b64);
        if e - j < 40 {
            return 0;
        }
        while e < s.len() && s[e] == b'=' {
            e += 1;
        }
        self.found(AZURE_STORAGE_KEY, &s[j..e])
    }

    fn github(&self, s: &[u8], i: usize) -> u32 {
        if prev_is(s, i, is_word) {
            return 0;
        }
        if has(s, i, b"github_pat_") {
            let e = run(s, i + 11, is_word);
            if e - (i + 11) >= 60 {
                return self.found(GITHUB_TOKEN, &s[i..e]);
            }
            return 0;
        }
        if i + 4 > s.len() || s[i + 1] != b'h' || s[i + 3] != b'_' || !one_of(s[i + 2], b"pousr") {
            return 0;
        }
        let e = run(s, i + 4, is_alnum);
        if e - (i + 4) >= 36 {
            return self.found(GITHUB_TOKEN, &s[i..e]);
        }
        0
    }

    fn slack(&self, s: &[u8], i: usize) -> u32 {
        if !has(s, i, b"xox") || i + 5 > s.len() || s[i + 4] != b'-' || !one_of(s[i + 3], b"bpars") || prev_is(s, i, is_slack) {
            return 0;
        }
        let e = run(s, i + 5, is_slack);
        if e - (i + 5) >= 20 {
            return self.found(SLACK_TOKEN, &s[i..e]);
        }
        0
    }

    fn pem(&self, s: &[u8], i: usize) -> u32 {
        if !has(s, i, b"-----BEGIN ") {
            return 0;
        }
        let j = i + 11;
        let mut k = j;
        while k < s.len() && k - j <= 40 && (is_upper_digit(s[k]) || s[k] == b' ') {
            k += 1;
        }
        if !has(s, k, b"-----") || !contains(&s[j..k], b"PRIVATE KEY") {
            return 0;
        }
        let mut b = k + 5;
        while b < s.len() && b - (k + 5) < 16 {
            if one_of(s[b], b" \t\r\n") {
                b += 1;
            } else if s[b] == b'\\' && b + 1 < s.len() && (s[b + 1] == b'n' || s[b + 1] == b'r') {
                b += 2;
            } else {
                break;
            }
        }
        if !has(s, b, b"Proc-Type:") && run(s, b, is_b64_pad) - b < 40 {
            return 0;
        }
        let from = if i > 24 { i - 24 } else { 0 };
        if contains(&s[from..i], b"\"private_key\"") {
            return self.found(GCP_SERVICE_ACCOUNT, b"");
        }
        self.found(PRIVATE_KEY, b"")
    }

    fn jwt(&self, s: &[u8], i: usize) -> u32 {
        if !has(s, i, b"eyJ") || prev_is(s, i, is_url64) {
            return 0;
        }
        let e1 = run(s, i, is_url64);
        if e1 - i > 1024 || e1 >= s.len() || s[e1] != b'.' {
            return 0;
        }
        let e2 = run(s, e1 + 1, is_url64);
        if e2 - (e1 + 1) < 2 || e2 >= s.len() || s[e2] != b'.' {
            return 0;
        }
        let e3 = run(s, e2 + 1, is_url64);
        if e3 - (e2 + 1) < 16 || !header_has_alg(&s[i..e1]) {
            return 0;
        }
        self.found(JWT, &s[i..e3])
    }

    fn sk_key(&self, s: &[u8], i: usize) -> u32 {
        if has(s, i, b"sk_live_") || has(s, i, b"rk_live_") {
            if prev_is(s, i, is_word) {
                return 0;
            }
            let e = run(s, i + 8, is_alnum);
            if e - (i + 8) >= 24 {
                return self.found(STRIPE_KEY, &s[i..e]);
            }
            return 0;
        }
        if !has(s, i, b"sk-") || prev_is(s, i, is_url64) {
            return 0;
        }
        if has(s, i, b"sk-ant-") {
            let e = run(s, i + 7, is_url64);
            if e - (i + 7) >= 32 {
                return self.found(ANTHROPIC_KEY, &s[i..e]);
            }
            return 0;
        }
        let e = run(s, i + 3, is_url64);
        if e - (i + 3) < 32 {
            return 0;
        }
        let v = &s[i + 3..e];
        if !v.iter().any(|b| b.is_ascii_digit()) || !v.iter().any(|b| b.is_ascii_uppercase()) || !v.iter().any(|b| b.is_ascii_lowercase()) {
            return 0;
        }
        self.found(OPENAI_KEY, &s[i..e])
    }

    fn prefixed(&self, s: &[u8], i: usize) -> u32 {
        let mut m = 0;
        if prev_is(s, i, is_url64) {
            return 0;
        }
        for n in 0..self.n_prefixes {
            let p = &self.prefixes[n];
            if has(s, i, p.text) {
                let j = i + p.text.len();
                let e = run(s, j, is_url64);
                if e - j >= p.min {
                    m |= self.found(BUILTIN_KINDS + n as u32, &s[i..e]);
                }
            }
        }
        m
    }

    fn assignment(&self, s: &[u8], i: usize) -> u32 {
        if s[i] == b'=' && i > 0 && one_of(s[i - 1], b":=!<>") || s[i] == b':' && has(s, i + 1, b"//") {
            return 0;
        }
        let mut j = i + 1;
        if j < s.len() && (s[j] == b'=' || s[j] == b'>') {
            j += 1;
        }
        while j < s.len() && j - i < 10 && (s[j] == b' ' || s[j] == b'\t') {
            j += 1;
        }
        if j < s.len() && one_of(s[j], b"\"'`") {
            j += 1;
        }
        let mut e = j;
        while e < s.len() && e - j <= MAX_VALUE && is_value(s[e]) {
            e += 1;
        }
        if e - j < MIN_VALUE || e - j > MAX_VALUE {
            return 0;
        }
        let mut k = i;
        while k > 0 && i - k < 8 && (s[k - 1] == b' ' || s[k - 1] == b'\t') {
            k -= 1;
        }
        if k > 0 && (s[k - 1] == b'"' || s[k - 1] == b'\'') {
            k -= 1;
        }
        let mut n = k;
        while n > 0 && k - n < MAX_NAME && is_ident(s[n - 1]) {
            n -= 1;
        }
        if n == k {
            return 0;
        }
        self.named(&s[n..k], &s[j..e])
    }

    pub fn named(&self, name: &[u8], v: &[u8]) -> u32 {
        if v.len() < MIN_VALUE || v.len() > MAX_VALUE || !secret_name(name) {
            return 0;
        }
        if (contains_fold(name, b"aws_secret") || contains_fold(name, b"secret_access_key") || contains_fold(name, b"secretaccesskey"))
            && v.len() == AWS_SECRET_SIZE
            && run(v, 0, is_b64) == v.len()
        {
            return self.found(AWS_SECRET_KEY, v);
        }
        if contains(v, b"://") || !mixed(v) || dotted(v) || !high_entropy(v) || self.scan(v) != 0 {
            return 0;
        }
        self.found(NAMED_SECRET, v)
    }
}

fn header_has_alg(seg: &[u8]) -> bool {
    let mut buf = [0u8; 768];
    let mut n = 0;
    let (mut acc, mut bits) = (0u32, 0u32);
    for &c in seg {
        acc = acc << 6 | url64_value(c) as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            buf[n] = (acc >> bits) as u8;
            n += 1;
            acc &= (1 << bits) - 1;
        }
    }
    n > 0 && buf[0] == b'{' && contains(&buf[..n], b"\"alg\"")
}

fn url64_value(b: u8) -> u8 {
    match b {
        b'A'..=b'Z' => b - b'A',
        b'a'..=b'z' => b - b'a' + 26,
        b'0'..=b'9' => b - b'0' + 52,
        b'-' => 62,
        _ => 63,
    }
}

const SECRET_NAMES: [&[u8]; 13] = [
    b"password", b"passwd", b"secret", b"token", b"apikey", b"api_key", b"api-key", b"access_key", b"accesskey",
    b"private_key", b"privatekey", b"auth_key", b"credential",
];
const NOT_SECRET_ENDS: [&[u8]; 20] = [
    b"name", b"id", b"ids", b"type", b"file", b"path", b"ref", b"url", b"uri", b"arn", b"count", b"length", b"size",
    b"version", b"kind", b"mode", b"field", b"env", b"var", b"header",
];
const MAX_NAME: usize = 64;
const MIN_VALUE: usize = 16;
pub const MAX_VALUE: usize = 256;
const MIN_ENTROPY: i64 = 3 * 1024;
const MIN_ENTROPY_HEX: i64 = 5 * 512;
const AWS_SECRET_SIZE: usize = 40;

fn secret_name(name: &[u8]) -> bool {
    for e in NOT_SECRET_ENDS {
        if name.len() >= e.len() && contains_fold(&name[name.len() - e.len()..], e) {
            return false;
        }
    }
    SECRET_NAMES.iter().any(|w| contains_fold(name, w))
}

fn mixed(v: &[u8]) -> bool {
    let digit = v.iter().any(|b| b.is_ascii_digit());
    let upper = v.iter().any(|b| b.is_ascii_uppercase());
    let lower = v.iter().any(|b| b.is_ascii_lowercase());
    let symbol = v.iter().any(|&b| one_of(b, b"+/!@#%^&*?|~"));
    digit || upper && lower && symbol
}

fn dotted(v: &[u8]) -> bool {
    if !is_letter(v[0]) || !v.contains(&b'.') {
        return false;
    }
    (0..v.len()).all(|i| v[i] != b'.' || i + 1 < v.len() && is_letter(v[i + 1]))
}

fn is_letter(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn hex(v: &[u8]) -> bool {
    v.iter().all(|&b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) || v.iter().all(|&b| b.is_ascii_digit() || (b'A'..=b'F').contains(&b))
}

fn high_entropy(v: &[u8]) -> bool {
    let mut counts = [0u16; 256];
    for &b in v {
        counts[b as usize] += 1;
    }
    let mut sum = 0i64;
    for &b in v {
        let c = counts[b as usize];
        if c != 0 {
            sum += NLOG2N[c as usize];
            counts[b as usize] = 0;
        }
    }
    let min = if hex(v) { MIN_ENTROPY_HEX } else { MIN_ENTROPY };
    NLOG2N[v.len()] - sum >= min * v.len() as i64
}

/// round(x·log2(x)·1024), as ../named.go's nlog2n.
static NLOG2N: [i64; MAX_VALUE + 1] = [
    0, 0, 2048, 4869, 8192, 11888, 15882, 20123, 24576, 29214, 34017, 38967,
    44052, 49260, 54582, 60010, 65536, 71155, 76860, 82648, 88513, 94452, 100462, 106539,
    112680, 118883, 125145, 131463, 137836, 144263, 150740, 157266, 163840, 170460, 177125, 183834,
    190584, 197376, 204207, 211078, 217986, 224931, 231913, 238929, 245980, 253065, 260182, 267331,
    274512, 281724, 288965, 296237, 303537, 310866, 318222, 325606, 333017, 340454, 347917, 355406,
    362919, 370458, 378020, 385606, 393216, 400849, 408504, 416182, 423882, 431604, 439347, 447111,
    454896, 462702, 470528, 478373, 486239, 494124, 502028, 509951, 517892, 525853, 533831, 541827,
    549842, 557873, 565923, 573989, 582072, 590172, 598289, 606422, 614572, 622737, 630919, 639116,
    647328, 655556, 663799, 672058, 680331, 688619, 696921, 705239, 713570, 721916, 730275, 738649,
    747037, 755438, 763852, 772280, 780722, 789177, 797644, 806125, 814618, 823125, 831644, 840175,
    848719, 857275, 865843, 874424, 883016, 891620, 900237, 908864, 917504, 926155, 934818, 943491,
    952177, 960873, 969580, 978299, 987028, 995769, 1004520, 1013282, 1022054, 1030837, 1039630, 1048434,
    1057248, 1066073, 1074908, 1083752, 1092607, 1101472, 1110347, 1119231, 1128125, 1137029, 1145943, 1154866,
    1163799, 1172742, 1181693, 1190654, 1199625, 1208604, 1217593, 1226591, 1235598, 1244614, 1253639, 1262673,
    1271715, 1280767, 1289827, 1298896, 1307973, 1317059, 1326154, 1335257, 1344369, 1353489, 1362617, 1371753,
    1380898, 1390051, 1399213, 1408382, 1417559, 1426745, 1435938, 1445140, 1454349, 1463566, 1472791, 1482024,
    1491264, 1500512, 1509768, 1519032, 1528303, 1537581, 1546867, 1556161, 1565462, 1574770, 1584086, 1593409,
    1602739, 1612076, 1621421, 1630773, 1640132, 1649498, 1658871, 1668252, 1677639, 1687033, 1696434, 1705842,
    1715257, 1724679, 1734107, 1743543, 1752985, 1762434, 1771889, 1781351, 1790820, 1800295, 1809777, 1819266,
    1828760, 1838262, 1847770, 1857284, 1866805, 1876332, 1885865, 1895405, 1904951, 1914503, 1924062, 1933627,
    1943197, 1952774, 1962358, 1971947, 1981542, 1991144, 2000751, 2010365, 2019984, 2029609, 2039241, 2048878,
    2058521, 2068170, 2077825, 2087486, 2097152,
];

pub fn is_alnum(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}
fn is_upper_digit(b: u8) -> bool {
    b.is_ascii_uppercase() || b.is_ascii_digit()
}
fn is_word(b: u8) -> bool {
    is_alnum(b) || b == b'_'
}
pub fn is_url64(b: u8) -> bool {
    is_word(b) || b == b'-'
}
fn is_slack(b: u8) -> bool {
    is_alnum(b) || b == b'-'
}
fn is_b64(b: u8) -> bool {
    is_alnum(b) || b == b'+' || b == b'/'
}
fn is_b64_pad(b: u8) -> bool {
    is_b64(b) || b == b'='
}
fn is_alnum_slash(b: u8) -> bool {
    is_alnum(b) || b == b'/'
}
fn is_ident(b: u8) -> bool {
    is_url64(b) || b == b'.'
}
pub fn is_value(b: u8) -> bool {
    is_alnum(b) || one_of(b, b"+/_-.~!@#%^&*?|")
}

fn one_of(b: u8, set: &[u8]) -> bool {
    set.contains(&b)
}

fn prev_is(s: &[u8], i: usize, class: fn(u8) -> bool) -> bool {
    i > 0 && class(s[i - 1])
}

pub fn run(s: &[u8], mut i: usize, class: fn(u8) -> bool) -> usize {
    while i < s.len() && class(s[i]) {
        i += 1;
    }
    i
}

fn has(s: &[u8], i: usize, lit: &[u8]) -> bool {
    i <= s.len() && s.len() - i >= lit.len() && &s[i..i + lit.len()] == lit
}

fn contains(s: &[u8], lit: &[u8]) -> bool {
    s.len() >= lit.len() && s.windows(lit.len()).any(|w| w == lit)
}

fn contains_fold(s: &[u8], lit: &[u8]) -> bool {
    s.len() >= lit.len() && s.windows(lit.len()).any(|w| w.iter().zip(lit).all(|(a, b)| a.to_ascii_lowercase() == *b))
}
