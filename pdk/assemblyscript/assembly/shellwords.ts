// A command line split into words as POSIX sh splits a simple command,
// without expanding anything, so a policy can judge a `command` argument by
// its words rather than by substrings. The rules are the Go kit's
// SplitWords (pdk/go/shellwords.go); the vectors every kit passes are
// pdk/testdata/shellwords.json:
//   - words are separated by unquoted spaces and tabs;
//   - '...' keeps everything up to the next ' as is;
//   - "..." keeps everything up to the next unescaped ", where a backslash
//     escapes only $ ` " \ and newline (and is otherwise kept);
//   - an unquoted backslash escapes the next character;
//   - backslash-newline is removed (a line continuation), quoted or not;
//   - an unquoted # at the start of a word starts a comment to the line's end;
//   - $, `, ~, * and the like are kept as written.
// Refused, because sh would not run the words as one command: an unquoted
// | & ; < > ( ) and a newline followed by anything but blanks; also an
// unterminated quote and a trailing backslash.
//
//   import { splitWords } from "@toolwarden/pdk/assembly/shellwords";
//   const w = splitWords(cmd);
//   if (w.error !== null) return Verdict.ask("unparsed_command", w.error!);
//   if (w.words.length && w.words[0] == "rm") ...

/** The words of a line, or why it was refused (words is then empty). */
export class Words {
  words: string[] = [];
  error: string | null = null;
}

function refuse(out: Words, why: string, at: i32): Words {
  out.words = [];
  out.error = "shell words: " + why + " (at character " + at.toString() + ")";
  return out;
}

/** Splits line into words (see the rules above). */
export function splitWords(line: string): Words {
  const out = new Words();
  const n = line.length;
  let cur = "";
  let inWord = false;
  for (let i = 0; i < n; i++) {
    const c = line.charCodeAt(i);
    if (c == 0x23 /* # */ && !inWord) {
      while (i + 1 < n && line.charCodeAt(i + 1) != 0x0a) i++;
      continue;
    }
    if (c == 0x20 || c == 0x09) {
      if (inWord) {
        out.words.push(cur);
        cur = "";
        inWord = false;
      }
    } else if (c == 0x0a) {
      for (let j = i + 1; j < n; j++) {
        const d = line.charCodeAt(j);
        if (d != 0x20 && d != 0x09 && d != 0x0a) return refuse(out, "newline: the line holds more than one command", i);
      }
      break;
    } else if (c == 0x7c || c == 0x26 || c == 0x3b || c == 0x3c || c == 0x3e || c == 0x28 || c == 0x29) {
      return refuse(out, "unquoted '" + String.fromCharCode(c) + "': the line is not a simple command (quote it to mean the character)", i);
    } else if (c == 0x5c /* \ */) {
      if (i + 1 == n) return refuse(out, "trailing backslash", i);
      i++;
      if (line.charCodeAt(i) != 0x0a) {
        cur += line.charAt(i);
        inWord = true;
      }
    } else if (c == 0x27 /* ' */) {
      const j = line.indexOf("'", i + 1);
      if (j < 0) return refuse(out, "unterminated single quote", i);
      cur += line.substring(i + 1, j);
      inWord = true;
      i = j;
    } else if (c == 0x22 /* " */) {
      const start = i;
      for (i++; ; i++) {
        if (i == n) return refuse(out, "unterminated double quote", start);
        const d = line.charCodeAt(i);
        if (d == 0x22) break;
        if (d == 0x5c && i + 1 < n) {
          const x = line.charCodeAt(i + 1);
          if (x == 0x24 || x == 0x60 || x == 0x22 || x == 0x5c) {
            i++;
            cur += line.charAt(i);
            continue;
          }
          if (x == 0x0a) {
            i++;
            continue;
          }
        }
        cur += line.charAt(i);
      }
      inWord = true;
    } else {
      cur += line.charAt(i);
      inWord = true;
    }
  }
  if (inWord) out.words.push(cur);
  return out;
}
