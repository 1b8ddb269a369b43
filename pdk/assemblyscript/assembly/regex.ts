// Regular expressions in Go's RE2 syntax (regexp.Compile), restricted to the
// subset every kit supports, matched in time linear in the subject by a
// Thompson NFA simulation: no backtracking, whatever the pattern, so a
// pattern from config is safe to run on arguments an agent chose.
//
//   import { Regex } from "@toolwarden/pdk/assembly/regex";
//   // in configure (the arena runtime keeps what configure allocates):
//   deny = Regex.compile(pattern);
//   if (deny.error !== null) return deny.error;
//   // in check:
//   if (deny.isMatch(cmd)) ...
//
// The subset: literals, escaped punctuation, \t \n \r \f \v \a; . (not \n);
// classes [...] and [^...] with ranges, escapes and \d \w \s \D \W \S;
// \d \w \s \D \W \S (ASCII, as in Go); ^ $ (start and end of the text);
// groups (...) and (?:...); alternation |; * + ? {n} {n,} {n,m} and their
// lazy forms; the flag i in (?i), (?-i), (?i:...), (?-i:...). What Go refuses
// is refused here too; what Go accepts beyond the subset (\pL, \b, \x41,
// [[:alpha:]], (?s), (?P<n>...), non-ASCII letters under (?i), ...) is
// refused as unsupported. "." and classes match one code point, as in Go.
// The vectors every kit passes are pdk/testdata/regex.json.

const MAX_INSTS: i32 = 100000;
const MAX_DEPTH: i32 = 100;
const MAX_REPEAT: i32 = 1000;

const N_CLASS: i32 = 0;
const N_ANY: i32 = 1;
const N_BEGIN: i32 = 2;
const N_END: i32 = 3;
const N_CAT: i32 = 4;
const N_ALT: i32 = 5;
const N_REPEAT: i32 = 6;

const I_CLASS: i32 = 0;
const I_ANY: i32 = 1;
const I_BEGIN: i32 = 2;
const I_END: i32 = 3;
const I_JMP: i32 = 4;
const I_SPLIT: i32 = 5;
const I_MATCH: i32 = 6;

/** A class as sorted, merged pairs lo, hi of code points. */
class RangeSet {
  r: i32[] = [];
  add(lo: i32, hi: i32): void {
    this.r.push(lo);
    this.r.push(hi);
  }
  addAll(o: RangeSet): void {
    for (let i = 0; i < o.r.length; i++) this.r.push(o.r[i]);
  }
  clean(): void {
    const r = this.r;
    for (let i = 2; i < r.length; i += 2) {
      for (let j = i; j >= 2 && r[j - 2] > r[j]; j -= 2) {
        const lo = r[j], hi = r[j + 1];
        r[j] = r[j - 2];
        r[j + 1] = r[j - 1];
        r[j - 2] = lo;
        r[j - 1] = hi;
      }
    }
    const out: i32[] = [];
    for (let i = 0; i < r.length; i += 2) {
      const n = out.length;
      if (n && r[i] <= out[n - 1] + 1) {
        if (r[i + 1] > out[n - 1]) out[n - 1] = r[i + 1];
        continue;
      }
      out.push(r[i]);
      out.push(r[i + 1]);
    }
    this.r = out;
  }
  negate(): void {
    this.clean();
    const out: i32[] = [];
    let next = 0;
    for (let i = 0; i < this.r.length; i += 2) {
      if (this.r[i] > next) {
        out.push(next);
        out.push(this.r[i] - 1);
      }
      next = this.r[i + 1] + 1;
    }
    if (next <= 0x10ffff) {
      out.push(next);
      out.push(0x10ffff);
    }
    this.r = out;
  }
  has(c: i32): bool {
    for (let i = 0; i < this.r.length; i += 2) if (this.r[i] <= c && c <= this.r[i + 1]) return true;
    return false;
  }
  /** Adds the case variants of ASCII letters, as Go's simple folding does
   * for them (k and s also fold to the Kelvin sign and the long s). */
  fold(): void {
    const snapshot = new RangeSet();
    snapshot.r = this.r.slice(0);
    for (let c = 0x61; c <= 0x7a; c++) {
      if (!(snapshot.has(c) || snapshot.has(c - 32) || (c == 0x6b && snapshot.has(0x212a)) || (c == 0x73 && snapshot.has(0x17f)))) continue;
      this.add(c, c);
      this.add(c - 32, c - 32);
      if (c == 0x6b) this.add(0x212a, 0x212a);
      if (c == 0x73) this.add(0x17f, 0x17f);
    }
  }
}

class Node {
  /** A repeat written {n,m}, which Go limits (see repeatOk). */
  counted: bool = false;
  constructor(public op: i32, public min: i32, public max: i32, public a: i32, public kids: i32[] | null) {}
}

/** The code points of s (a lone surrogate is U+FFFD). */
function codePoints(s: string): i32[] {
  const out: i32[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        out.push(0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00));
        i++;
        continue;
      }
    }
    out.push(c >= 0xd800 && c <= 0xdfff ? 0xfffd : c);
  }
  return out;
}

function isAlnum(c: i32): bool {
  return (c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a);
}

class Parser {
  s: i32[];
  i: i32 = 0;
  fold: bool = false;
  depth: i32 = 0;
  nodes: Node[] = [];
  classes: RangeSet[] = [];
  err: string | null = null;
  errFrom: i32 = 0;
  errTo: i32 = 0;
  constructor(s: i32[]) {
    this.s = s;
  }

  fail(err: string, from: i32, to: i32): bool {
    if (this.err === null) {
      this.err = err;
      this.errFrom = from;
      this.errTo = to;
    }
    return false;
  }

  node(n: Node): i32 {
    this.nodes.push(n);
    return this.nodes.length - 1;
  }

  classNode(set: RangeSet): i32 {
    set.clean();
    this.classes.push(set);
    return this.node(new Node(N_CLASS, 0, 0, this.classes.length - 1, null));
  }

  /** \d \s \w (upper case: negated) into set; false if c names none. */
  perl(c: i32, set: RangeSet): bool {
    const g = new RangeSet();
    const l = c | 0x20;
    if (l == 0x64) {
      g.add(0x30, 0x39);
    } else if (l == 0x73) {
      g.add(9, 10);
      g.add(12, 13);
      g.add(0x20, 0x20);
    } else if (l == 0x77) {
      g.add(0x30, 0x39);
      g.add(0x41, 0x5a);
      g.add(0x5f, 0x5f);
      g.add(0x61, 0x7a);
    } else {
      return false;
    }
    if (this.fold) g.fold();
    if (c < 0x61) g.negate();
    set.addAll(g);
    return true;
  }

  /** The escape after the backslash at bs, as one character (-1: refused). */
  escape(bs: i32): i32 {
    if (this.i >= this.s.length) {
      this.fail("trailing backslash at end of expression", bs, this.s.length);
      return -1;
    }
    const c = this.s[this.i];
    let r = c;
    if (c == 0x74) r = 9;
    else if (c == 0x6e) r = 10;
    else if (c == 0x72) r = 13;
    else if (c == 0x66) r = 12;
    else if (c == 0x76) r = 11;
    else if (c == 0x61) r = 7;
    else if (c >= 0x80 || isAlnum(c)) {
      this.fail("invalid or unsupported escape sequence", bs, this.i + 1);
      return -1;
    }
    this.i++;
    return r;
  }

  literal(r: i32, set: RangeSet, from: i32): bool {
    if (this.fold && r >= 0x80) return this.fail("unsupported: a non-ASCII character under (?i)", from, this.i);
    set.add(r, r);
    if (this.fold) set.fold();
    return true;
  }

  klass(): i32 {
    const s = this.s;
    const open = this.i++;
    const set = new RangeSet();
    let neg = false;
    if (this.i < s.length && s[this.i] == 0x5e) {
      neg = true;
      this.i++;
    }
    let first = true;
    for (;;) {
      if (this.i >= s.length) {
        this.fail("missing closing ]", open, s.length);
        return -1;
      }
      if (s[this.i] == 0x5d && !first) break;
      first = false;
      const at = this.i;
      if (s[this.i] == 0x5b && this.i + 1 < s.length && s[this.i + 1] == 0x3a) {
        for (let q = this.i + 2; q + 1 < s.length; q++) {
          if (s[q] == 0x3a && s[q + 1] == 0x5d) {
            this.fail("unsupported: POSIX classes such as [:alpha:]", at, q + 2);
            return -1;
          }
        }
      }
      if (s[this.i] == 0x5c && this.i + 1 < s.length && this.perl(s[this.i + 1], set)) {
        this.i += 2;
        continue;
      }
      let lo: i32;
      if (s[this.i] == 0x5c) {
        this.i++;
        lo = this.escape(at);
        if (lo < 0) return -1;
      } else {
        lo = s[this.i++];
      }
      let hi = lo;
      if (this.i + 1 < s.length && s[this.i] == 0x2d && s[this.i + 1] != 0x5d) {
        this.i++;
        const h = this.i;
        if (s[this.i] == 0x5c) {
          this.i++;
          hi = this.escape(h);
          if (hi < 0) return -1;
        } else {
          hi = s[this.i++];
        }
        if (hi < lo) {
          this.fail("invalid character class range", at, this.i);
          return -1;
        }
      }
      if (this.fold && hi >= 0x80) {
        this.fail("unsupported: a non-ASCII character under (?i)", at, this.i);
        return -1;
      }
      const one = new RangeSet();
      one.add(lo, hi);
      if (this.fold) one.fold();
      set.addAll(one);
    }
    this.i++;
    if (neg) set.negate();
    return this.classNode(set);
  }

  /** A repeat count as Go's parseInt reads it (-1: not one); saturates. */
  int(): i32 {
    const s = this.s;
    let q = this.i;
    if (q >= s.length || s[q] < 0x30 || s[q] > 0x39) return -1;
    if (q + 1 < s.length && s[q] == 0x30 && s[q + 1] >= 0x30 && s[q + 1] <= 0x39) return -1;
    let x = 0;
    for (; q < s.length && s[q] >= 0x30 && s[q] <= 0x39; q++) if (x <= MAX_REPEAT) x = x * 10 + (s[q] - 0x30);
    this.i = q;
    return x;
  }

  /** {n}, {n,} or {n,m} at this.i as Go's parseRepeat reads it: [min, max,
   * bad] or null (this.i unmoved: { is then a literal). */
  repeatOp(): i32[] | null {
    const s = this.s;
    const start = this.i;
    this.i++;
    const min = this.int();
    let max = min;
    if (min < 0 || this.i >= s.length) {
      this.i = start;
      return null;
    }
    if (s[this.i] == 0x2c) {
      this.i++;
      if (this.i >= s.length) {
        this.i = start;
        return null;
      }
      if (s[this.i] == 0x7d) {
        max = -1;
      } else {
        max = this.int();
        if (max < 0) {
          this.i = start;
          return null;
        }
      }
    }
    if (this.i >= s.length || s[this.i] != 0x7d) {
      this.i = start;
      return null;
    }
    this.i++;
    const bad = min > MAX_REPEAT || max > MAX_REPEAT || (max >= 0 && min > max);
    return [min, max, bad ? 1 : 0];
  }

  /** Go's repeatIsValid: counted repeats nested in one another may not
   * make more than n copies of what is innermost ((a{100}){11} is refused). */
  repeatOk(ni: i32, n: i32): bool {
    const x = this.nodes[ni];
    if (x.op == N_REPEAT && x.counted) {
      let m = x.max;
      if (m == 0) return true;
      if (m < 0) m = x.min;
      if (m > n) return false;
      if (m > 0) n /= m;
    }
    if (x.op == N_REPEAT) return this.repeatOk(x.a, n);
    if (x.kids !== null) {
      const kids = x.kids!;
      for (let i = 0; i < kids.length; i++) if (!this.repeatOk(kids[i], n)) return false;
    }
    return true;
  }

  concat(): i32 {
    const s = this.s;
    const items: i32[] = [];
    let lastRepeat = false;
    while (this.i < s.length && s[this.i] != 0x7c && s[this.i] != 0x29) {
      const at = this.i;
      const c = s[this.i];
      let repeat = false;
      let min = 0, max = 0;
      if (c == 0x2a || c == 0x2b || c == 0x3f) {
        this.i++;
        min = c == 0x2b ? 1 : 0;
        max = c == 0x3f ? 1 : -1;
        repeat = true;
      } else if (c == 0x7b) {
        const r = this.repeatOp();
        if (r !== null) {
          if (r[2]) {
            this.fail("invalid repeat count", at, this.i);
            return -1;
          }
          min = r[0];
          max = r[1];
          repeat = true;
        }
      }
      if (repeat) {
        if (this.i < s.length && s[this.i] == 0x3f) this.i++; // lazy: the same for "does it match"
        if (!items.length) {
          this.fail("missing argument to repetition operator", at, this.i);
          return -1;
        }
        if (lastRepeat) {
          this.fail("invalid nested repetition operator", at, this.i);
          return -1;
        }
        const rep = new Node(N_REPEAT, min, max, items[items.length - 1], null);
        rep.counted = c == 0x7b;
        items[items.length - 1] = this.node(rep);
        if (rep.counted && (min >= 2 || max >= 2) && !this.repeatOk(items[items.length - 1], MAX_REPEAT)) {
          this.fail("invalid repeat count", at, this.i);
          return -1;
        }
        lastRepeat = true;
        continue;
      }
      lastRepeat = false;
      let n: i32;
      if (c == 0x28) {
        if (++this.depth > MAX_DEPTH) {
          this.fail("unsupported: groups nested too deeply", at, at + 1);
          return -1;
        }
        this.i++;
        const saved = this.fold;
        let scoped = false;
        if (this.i < s.length && s[this.i] == 0x3f) {
          let q = this.i + 1;
          let neg = false, setf = false;
          if (q < s.length && s[q] == 0x2d) {
            neg = true;
            q++;
          }
          if (q < s.length && s[q] == 0x69) {
            setf = true;
            q++;
          }
          if (q < s.length && (s[q] == 0x29 || s[q] == 0x3a) && (setf || (!neg && s[q] == 0x3a))) {
            if (setf) this.fold = !neg;
            this.i = q + 1;
            if (s[q] == 0x29) {
              // (?i): the flag holds to the end of the group around it
              this.depth--;
              continue;
            }
            scoped = true;
          } else {
            this.fail("unsupported group or flags (the subset has (?:...), (?i), (?-i), (?i:...))", at, q < s.length ? q + 1 : q);
            return -1;
          }
        }
        n = this.alt();
        if (n < 0) return -1;
        if (this.i >= s.length) {
          this.fail("missing closing )", at, s.length);
          return -1;
        }
        this.i++;
        if (scoped) this.fold = saved;
        this.depth--;
      } else if (c == 0x5b) {
        n = this.klass();
        if (n < 0) return -1;
      } else if (c == 0x2e) {
        this.i++;
        n = this.node(new Node(N_ANY, 0, 0, 0, null));
      } else if (c == 0x5e) {
        this.i++;
        n = this.node(new Node(N_BEGIN, 0, 0, 0, null));
      } else if (c == 0x24) {
        this.i++;
        n = this.node(new Node(N_END, 0, 0, 0, null));
      } else if (c == 0x5c) {
        const set = new RangeSet();
        this.i++;
        if (this.i < s.length && this.perl(s[this.i], set)) {
          this.i++;
        } else {
          const r = this.escape(at);
          if (r < 0) return -1;
          set.add(r, r);
          if (this.fold) set.fold();
        }
        n = this.classNode(set);
      } else {
        const set = new RangeSet();
        this.i++;
        if (!this.literal(c, set, at)) return -1;
        n = this.classNode(set);
      }
      items.push(n);
    }
    return this.node(new Node(N_CAT, 0, 0, 0, items));
  }

  alt(): i32 {
    const items: i32[] = [];
    const fold = this.fold;
    let more = true;
    while (more) {
      const n = this.concat();
      if (n < 0) return -1;
      items.push(n);
      more = this.i < this.s.length && this.s[this.i] == 0x7c;
      if (more) this.i++;
    }
    this.fold = fold; // (?i) inside a group ends with it
    return this.node(new Node(N_ALT, 0, 0, 0, items));
  }
}

class Compiler {
  prog: i32[] = []; // op, x, y per instruction
  big: bool = false;
  constructor(public nodes: Node[]) {}

  pc(): i32 {
    return this.prog.length / 3;
  }

  emit(op: i32, x: i32, y: i32): i32 {
    if (this.pc() >= MAX_INSTS) {
      this.big = true;
      return 0;
    }
    this.prog.push(op);
    this.prog.push(x);
    this.prog.push(y);
    return this.pc() - 1;
  }

  compile(ni: i32): void {
    if (this.big) return;
    const n = this.nodes[ni];
    if (n.op == N_CLASS) {
      this.emit(I_CLASS, n.a, 0);
    } else if (n.op == N_ANY) {
      this.emit(I_ANY, 0, 0);
    } else if (n.op == N_BEGIN) {
      this.emit(I_BEGIN, 0, 0);
    } else if (n.op == N_END) {
      this.emit(I_END, 0, 0);
    } else if (n.op == N_CAT) {
      const kids = n.kids!;
      for (let i = 0; i < kids.length; i++) this.compile(kids[i]);
    } else if (n.op == N_ALT) {
      const kids = n.kids!;
      const jumps: i32[] = [];
      for (let i = 0; i < kids.length; i++) {
        const last = i + 1 == kids.length;
        let split = 0;
        if (!last) {
          split = this.emit(I_SPLIT, 0, 0);
          if (this.big) return;
          this.prog[split * 3 + 1] = this.pc();
        }
        this.compile(kids[i]);
        if (!last) {
          const j = this.emit(I_JMP, 0, 0);
          if (this.big) return;
          jumps.push(j);
          this.prog[split * 3 + 2] = this.pc();
        }
      }
      const end = this.pc();
      for (let i = 0; i < jumps.length; i++) this.prog[jumps[i] * 3 + 1] = end;
    } else {
      for (let i = 0; i < n.min; i++) this.compile(n.a);
      if (n.max < 0) {
        const l = this.emit(I_SPLIT, 0, 0);
        if (this.big) return;
        this.prog[l * 3 + 1] = l + 1;
        this.compile(n.a);
        this.emit(I_JMP, l, 0);
        if (this.big) return;
        this.prog[l * 3 + 2] = this.pc();
      } else {
        for (let i = n.min; i < n.max; i++) {
          const l = this.emit(I_SPLIT, 0, 0);
          if (this.big) return;
          this.prog[l * 3 + 1] = l + 1;
          this.compile(n.a);
          if (this.big) return;
          this.prog[l * 3 + 2] = this.pc();
        }
      }
    }
  }
}

/** A compiled pattern; error is set (and nothing matches) when the pattern
 * was refused, in Go's words where Go refuses it too:
 * "error parsing regexp: missing closing ): `(a`". */
export class Regex {
  error: string | null = null;
  prog: StaticArray<i32> = new StaticArray<i32>(0);
  classes: StaticArray<i32>[] = [];

  static compile(pattern: string): Regex {
    const re = new Regex();
    const cps = codePoints(pattern);
    const p = new Parser(cps);
    const root = p.alt();
    if (root >= 0 && p.i < cps.length) p.fail("unexpected )", 0, cps.length);
    let c: Compiler | null = null;
    if (p.err === null) {
      c = new Compiler(p.nodes);
      c.compile(root);
      c.emit(I_MATCH, 0, 0);
      if (c.big) p.fail("unsupported: pattern too large (counted repeats such as {1000} are expanded)", 0, cps.length);
    }
    if (p.err !== null) {
      let at = "";
      for (let i = p.errFrom; i < p.errTo && i < cps.length; i++) at += String.fromCodePoint(cps[i]);
      re.error = "error parsing regexp: " + p.err! + ": `" + at + "`";
      return re;
    }
    re.prog = StaticArray.fromArray<i32>(c!.prog);
    for (let i = 0; i < p.classes.length; i++) re.classes.push(StaticArray.fromArray<i32>(p.classes[i].r));
    return re;
  }

  /** Adds pc and what it reaches without consuming to list, once per step. */
  private add(pc0: i32, list: StaticArray<i32>, count: i32, mark: StaticArray<i32>, gen: i32, stack: StaticArray<i32>, pos: i32, len: i32): i32 {
    const prog = this.prog;
    let sp = 0;
    unchecked((stack[sp++] = pc0));
    while (sp) {
      const pc = unchecked(stack[--sp]);
      if (unchecked(mark[pc]) == gen) continue;
      unchecked((mark[pc] = gen));
      const op = unchecked(prog[pc * 3]);
      if (op == I_MATCH) return -1;
      if (op == I_JMP) unchecked((stack[sp++] = prog[pc * 3 + 1]));
      else if (op == I_SPLIT) {
        unchecked((stack[sp++] = prog[pc * 3 + 2]));
        unchecked((stack[sp++] = prog[pc * 3 + 1]));
      } else if (op == I_BEGIN) {
        if (pos == 0) unchecked((stack[sp++] = pc + 1));
      } else if (op == I_END) {
        if (pos == len) unchecked((stack[sp++] = pc + 1));
      } else unchecked((list[count++] = pc));
    }
    return count;
  }

  /** Whether the pattern matches anywhere in s, in time linear in s. */
  isMatch(s: string): bool {
    if (this.error !== null) return false;
    const text = codePoints(s);
    const len = text.length;
    const n = this.prog.length / 3;
    const mark = new StaticArray<i32>(n);
    for (let i = 0; i < n; i++) mark[i] = -1;
    let cur = new StaticArray<i32>(n), next = new StaticArray<i32>(n);
    const stack = new StaticArray<i32>(2 * n + 2);
    let count = 0, gen = 0;
    for (let pos = 0; ; pos++) {
      // A new thread starts at every position ("matches anywhere"), in the
      // same step as the threads already in the list.
      count = this.add(0, cur, count, mark, gen, stack, pos, len);
      if (count < 0) return true;
      if (pos >= len) return false;
      const r = unchecked(text[pos]);
      gen++;
      let nc = 0;
      for (let i = 0; i < count; i++) {
        const pc = unchecked(cur[i]);
        const op = unchecked(this.prog[pc * 3]);
        let ok = false;
        if (op == I_ANY) {
          ok = r != 10;
        } else {
          const rg = unchecked(this.classes[unchecked(this.prog[pc * 3 + 1])]);
          for (let k = 0; k < rg.length && !ok; k += 2) ok = unchecked(rg[k]) <= r && r <= unchecked(rg[k + 1]);
        }
        if (ok) {
          nc = this.add(pc + 1, next, nc, mark, gen, stack, pos + 1, len);
          if (nc < 0) return true;
        }
      }
      const t = cur;
      cur = next;
      next = t;
      count = nc;
    }
    return false; // not reached: the loop returns at the end of s
  }
}
