;; The example policy of the ABI conformance vectors (README.md), written in WebAssembly text
;; from pdk/ABI.md alone: no PDK, no WASI, no allocator. It is the proof that the ABI document is
;; enough. Build: wat2wasm example.wat -o example.wasm
;; Test:  toolwarden plugin test example.wasm cases.json
;;
;; It holds a small JSON reader: $skip_string, $skip_value, $find (a member of an object), $has (a
;; string in an array). Strings are compared raw (between the quotes), so escaped spellings of a
;; compared string do not match; the vectors never escape strings that are compared.
;;
;; Memory: constants in page 0, the input from offset 65536 (page 1 on), grown as needed.
(module
  (import "toolwarden" "input_read" (func $input_read (param i32 i32) (result i32)))
  (import "toolwarden" "output_write" (func $output_write (param i32 i32) (result i32)))
  (memory (export "memory") 2)
  (data (i32.const 16) "{\"name\":\"example\",\"version\":\"1.0.0\",\"events\":[\"list\",\"check\",\"observe\"]}") ;; D_DESC, 72 bytes
  (data (i32.const 96) "plugin") ;; K_PLUGIN, 6 bytes
  (data (i32.const 112) "config") ;; K_CONFIG, 6 bytes
  (data (i32.const 128) "blocked_tool") ;; K_BLOCKED, 12 bytes
  (data (i32.const 144) "call") ;; K_CALL, 4 bytes
  (data (i32.const 160) "tool") ;; K_TOOL, 4 bytes
  (data (i32.const 176) "name") ;; K_NAME, 4 bytes
  (data (i32.const 192) "session") ;; K_SESSION, 7 bytes
  (data (i32.const 208) "labels") ;; K_LABELS, 6 bytes
  (data (i32.const 224) "capabilities") ;; K_CAPS, 12 bytes
  (data (i32.const 240) "can_exfiltrate") ;; K_EXFIL, 14 bytes
  (data (i32.const 256) "hints") ;; K_HINTS, 5 bytes
  (data (i32.const 272) "readOnlyHint") ;; K_RO, 12 bytes
  (data (i32.const 288) "sees_untrusted_content") ;; K_UNTRUSTED, 22 bytes
  (data (i32.const 320) "tools") ;; K_TOOLS, 5 bytes
  (data (i32.const 336) "tainted") ;; V_TAINTED, 7 bytes
  (data (i32.const 352) "{\"decision\":\"deny\",\"code\":\"blocked_tool\",\"reason\":\"this tool is blocked by the policy config\"}") ;; O_DENY, 94 bytes
  (data (i32.const 448) "{\"decision\":\"ask\",\"code\":\"tainted_exfiltration\",\"reason\":\"the session is tainted and this tool can send data out\",\"remember\":false}") ;; O_ASK, 131 bytes
  (data (i32.const 592) "{\"decision\":\"allow\",\"code\":\"read_only\",\"reason\":\"the tool is read-only\"}") ;; O_ALLOW, 72 bytes
  (data (i32.const 672) "{\"labels\":[\"tainted\"]}") ;; O_OBSERVE, 22 bytes
  (data (i32.const 704) "{\"hide\":[") ;; O_HIDE_OPEN, 9 bytes
  (data (i32.const 720) "]}") ;; O_HIDE_CLOSE, 2 bytes
  (data (i32.const 736) ",") ;; O_COMMA, 1 bytes

  (func (export "toolwarden_abi_v1"))

  ;; $ws returns the first index at or after $p that is not JSON white space.
  (func $ws (param $p i32) (result i32)
    (local $c i32)
    (block $done
      (loop $l
        (local.set $c (i32.load8_u (local.get $p)))
        (br_if $done (i32.and (i32.and (i32.ne (local.get $c) (i32.const 32)) (i32.ne (local.get $c) (i32.const 9)))
                              (i32.and (i32.ne (local.get $c) (i32.const 10)) (i32.ne (local.get $c) (i32.const 13)))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $l)))
    (local.get $p))

  ;; $skip_string: $p is at a '"'; returns the index after the closing quote.
  (func $skip_string (param $p i32) (result i32)
    (local $c i32)
    (local.set $p (i32.add (local.get $p) (i32.const 1)))
    (loop $l
      (local.set $c (i32.load8_u (local.get $p)))
      (if (i32.eq (local.get $c) (i32.const 34)) (then (return (i32.add (local.get $p) (i32.const 1)))))
      (if (i32.eq (local.get $c) (i32.const 92)) (then (local.set $p (i32.add (local.get $p) (i32.const 1)))))
      (local.set $p (i32.add (local.get $p) (i32.const 1)))
      (br $l))
    (unreachable))

  ;; $skip_value: $p is at the first byte of a value; returns the index after it.
  (func $skip_value (param $p i32) (result i32)
    (local $depth i32) (local $c i32)
    (loop $l
      (local.set $c (i32.load8_u (local.get $p)))
      (block $next
        (if (i32.eq (local.get $c) (i32.const 34))
          (then (local.set $p (call $skip_string (local.get $p))) (br $next)))
        (if (i32.or (i32.eq (local.get $c) (i32.const 123)) (i32.eq (local.get $c) (i32.const 91)))
          (then
            (local.set $depth (i32.add (local.get $depth) (i32.const 1)))
            (local.set $p (i32.add (local.get $p) (i32.const 1)))
            (br $l)))
        (if (i32.or (i32.eq (local.get $c) (i32.const 125)) (i32.eq (local.get $c) (i32.const 93)))
          (then
            (local.set $depth (i32.sub (local.get $depth) (i32.const 1)))
            (local.set $p (i32.add (local.get $p) (i32.const 1)))
            (br $next)))
        (if (i32.or (i32.or (i32.eq (local.get $c) (i32.const 44)) (i32.eq (local.get $c) (i32.const 58)))
                    (i32.le_u (local.get $c) (i32.const 32)))
          (then (local.set $p (i32.add (local.get $p) (i32.const 1))) (br $l)))
        ;; a number or literal: up to the next delimiter
        (block $end
          (loop $lit
            (local.set $c (i32.load8_u (local.get $p)))
            (br_if $end (i32.or (i32.or (i32.eq (local.get $c) (i32.const 44)) (i32.eq (local.get $c) (i32.const 125)))
                                (i32.or (i32.eq (local.get $c) (i32.const 93)) (i32.le_u (local.get $c) (i32.const 32)))))
            (local.set $p (i32.add (local.get $p) (i32.const 1)))
            (br $lit))))
      (br_if $l (i32.gt_s (local.get $depth) (i32.const 0))))
    (local.get $p))

  ;; $bytes_eq compares two byte ranges.
  (func $bytes_eq (param $a i32) (param $alen i32) (param $b i32) (param $blen i32) (result i32)
    (local $i i32)
    (if (i32.ne (local.get $alen) (local.get $blen)) (then (return (i32.const 0))))
    (block $done
      (loop $l
        (br_if $done (i32.ge_u (local.get $i) (local.get $alen)))
        (if (i32.ne (i32.load8_u (i32.add (local.get $a) (local.get $i))) (i32.load8_u (i32.add (local.get $b) (local.get $i))))
          (then (return (i32.const 0))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $l)))
    (i32.const 1))

  ;; $find: $obj points at an object (else, or 0, gives 0); returns a pointer to the value of
  ;; the member named ($k, $klen), or 0.
  (func $find (param $obj i32) (param $k i32) (param $klen i32) (result i32)
    (local $p i32) (local $ks i32) (local $ke i32)
    (if (i32.eqz (local.get $obj)) (then (return (i32.const 0))))
    (if (i32.ne (i32.load8_u (local.get $obj)) (i32.const 123)) (then (return (i32.const 0))))
    (local.set $p (call $ws (i32.add (local.get $obj) (i32.const 1))))
    (loop $member
      (if (i32.ne (i32.load8_u (local.get $p)) (i32.const 34)) (then (return (i32.const 0))))
      (local.set $ks (i32.add (local.get $p) (i32.const 1)))
      (local.set $p (call $skip_string (local.get $p)))
      (local.set $ke (i32.sub (local.get $p) (i32.const 1)))
      ;; white space, ':', white space
      (local.set $p (call $ws (i32.add (call $ws (local.get $p)) (i32.const 1))))
      (if (call $bytes_eq (local.get $ks) (i32.sub (local.get $ke) (local.get $ks)) (local.get $k) (local.get $klen))
        (then (return (local.get $p))))
      (local.set $p (call $ws (call $skip_value (local.get $p))))
      (if (i32.eq (i32.load8_u (local.get $p)) (i32.const 44))
        (then
          (local.set $p (call $ws (i32.add (local.get $p) (i32.const 1))))
          (br $member))))
    (i32.const 0))

  ;; $str_is: is the value at $v the string ($k, $klen)?
  (func $str_is (param $v i32) (param $k i32) (param $klen i32) (result i32)
    (if (i32.eqz (local.get $v)) (then (return (i32.const 0))))
    (if (i32.ne (i32.load8_u (local.get $v)) (i32.const 34)) (then (return (i32.const 0))))
    (call $bytes_eq
      (i32.add (local.get $v) (i32.const 1))
      (i32.sub (i32.sub (call $skip_string (local.get $v)) (local.get $v)) (i32.const 2))
      (local.get $k) (local.get $klen)))

  ;; $same_string: are the values at $v and $w the same string?
  (func $same_string (param $v i32) (param $w i32) (result i32)
    (if (i32.or (i32.eqz (local.get $v)) (i32.eqz (local.get $w))) (then (return (i32.const 0))))
    (if (i32.ne (i32.load8_u (local.get $w)) (i32.const 34)) (then (return (i32.const 0))))
    (call $str_is (local.get $v)
      (i32.add (local.get $w) (i32.const 1))
      (i32.sub (i32.sub (call $skip_string (local.get $w)) (local.get $w)) (i32.const 2))))

  ;; $is_true: is the value at $v the literal true?
  (func $is_true (param $v i32) (result i32)
    (if (i32.eqz (local.get $v)) (then (return (i32.const 0))))
    (i32.eq (i32.load8_u (local.get $v)) (i32.const 116)))

  ;; $has: is the string ($k, $klen) an element of the array at $arr?
  (func $has (param $arr i32) (param $k i32) (param $klen i32) (result i32)
    (local $p i32)
    (if (i32.eqz (local.get $arr)) (then (return (i32.const 0))))
    (if (i32.ne (i32.load8_u (local.get $arr)) (i32.const 91)) (then (return (i32.const 0))))
    (local.set $p (call $ws (i32.add (local.get $arr) (i32.const 1))))
    (if (i32.eq (i32.load8_u (local.get $p)) (i32.const 93)) (then (return (i32.const 0))))
    (loop $el
      (if (call $str_is (local.get $p) (local.get $k) (local.get $klen)) (then (return (i32.const 1))))
      (local.set $p (call $ws (call $skip_value (local.get $p))))
      (if (i32.eq (i32.load8_u (local.get $p)) (i32.const 44))
        (then
          (local.set $p (call $ws (i32.add (local.get $p) (i32.const 1))))
          (br $el))))
    (i32.const 0))

  (func (export "toolwarden_handle") (param $event i32) (param $len i32) (result i32)
    (local $pages i32) (local $root i32) (local $blocked i32) (local $call i32)
    (local $p i32) (local $name i32) (local $hidden i32)
    ;; events after observe are not handled (ABI section 3)
    (if (i32.gt_u (local.get $event) (i32.const 3)) (then (return (i32.const 1))))
    ;; room for the input at 65536 plus a zero byte after it
    (local.set $pages (i32.add (i32.div_u (i32.add (local.get $len) (i32.const 1)) (i32.const 65536)) (i32.const 2)))
    (if (i32.gt_u (local.get $pages) (memory.size))
      (then
        (if (i32.eq (memory.grow (i32.sub (local.get $pages) (memory.size))) (i32.const -1))
          (then (return (i32.const 3))))))
    (drop (call $input_read (i32.const 65536) (local.get $len)))
    (i32.store8 (i32.add (i32.const 65536) (local.get $len)) (i32.const 0))
    (local.set $root (call $ws (i32.const 65536)))
    (if (i32.ne (i32.load8_u (local.get $root)) (i32.const 123)) (then (return (i32.const 2))))
    ;; plugin.config.blocked_tool (0 when absent)
    (local.set $blocked (call $find (call $find (call $find (local.get $root) (i32.const 96) (i32.const 6)) (i32.const 112) (i32.const 6)) (i32.const 128) (i32.const 12)))

    ;; describe
    (if (i32.eqz (local.get $event))
      (then
        (drop (call $output_write (i32.const 16) (i32.const 72)))
        (return (i32.const 0))))

    ;; list: hide the tools named plugin.config.blocked_tool
    (if (i32.eq (local.get $event) (i32.const 1))
      (then
        (drop (call $output_write (i32.const 704) (i32.const 9)))
        (local.set $p (call $find (local.get $root) (i32.const 320) (i32.const 5)))
        (if (i32.and (i32.ne (local.get $p) (i32.const 0)) (i32.eq (i32.load8_u (local.get $p)) (i32.const 91)))
          (then
            (local.set $p (call $ws (i32.add (local.get $p) (i32.const 1))))
            (if (i32.ne (i32.load8_u (local.get $p)) (i32.const 93))
              (then
                (loop $tool
                  (local.set $name (call $find (local.get $p) (i32.const 176) (i32.const 4)))
                  (if (call $same_string (local.get $name) (local.get $blocked))
                    (then
                      (if (local.get $hidden) (then (drop (call $output_write (i32.const 736) (i32.const 1)))))
                      (local.set $hidden (i32.const 1))
                      ;; the name as it came, quotes included
                      (drop (call $output_write (local.get $name)
                        (i32.sub (call $skip_string (local.get $name)) (local.get $name))))))
                  (local.set $p (call $ws (call $skip_value (local.get $p))))
                  (if (i32.eq (i32.load8_u (local.get $p)) (i32.const 44))
                    (then
                      (local.set $p (call $ws (i32.add (local.get $p) (i32.const 1))))
                      (br $tool))))))))
        (drop (call $output_write (i32.const 720) (i32.const 2)))
        (return (i32.const 0))))

    (local.set $call (call $find (local.get $root) (i32.const 144) (i32.const 4)))

    ;; observe: a tool that sees untrusted content taints the session
    (if (i32.eq (local.get $event) (i32.const 3))
      (then
        (if (call $is_true (call $find (call $find (local.get $call) (i32.const 224) (i32.const 12)) (i32.const 288) (i32.const 22)))
          (then (drop (call $output_write (i32.const 672) (i32.const 22)))))
        (return (i32.const 0))))

    ;; check, first match wins
    ;; 1. the blocked tool is denied
    (if (call $same_string (call $find (call $find (local.get $call) (i32.const 160) (i32.const 4)) (i32.const 176) (i32.const 4)) (local.get $blocked))
      (then
        (drop (call $output_write (i32.const 352) (i32.const 94)))
        (return (i32.const 0))))
    ;; 2. a tainted session asks before a tool that can exfiltrate
    (if (i32.and
          (call $has (call $find (call $find (local.get $root) (i32.const 192) (i32.const 7)) (i32.const 208) (i32.const 6)) (i32.const 336) (i32.const 7))
          (call $is_true (call $find (call $find (local.get $call) (i32.const 224) (i32.const 12)) (i32.const 240) (i32.const 14))))
      (then
        (drop (call $output_write (i32.const 448) (i32.const 131)))
        (return (i32.const 0))))
    ;; 3. a read-only tool is allowed
    (if (call $is_true (call $find (call $find (local.get $call) (i32.const 256) (i32.const 5)) (i32.const 272) (i32.const 12)))
      (then
        (drop (call $output_write (i32.const 592) (i32.const 72)))
        (return (i32.const 0))))
    ;; 4. no opinion: empty output
    (i32.const 0)))
