;; rootguard: toolwarden's example policy, hand-written in WebAssembly text
;; (see ../README.md for the policy; the conformance suite is
;; pdk/testdata/conformance/rootguard.json). No PDK: this file is the whole
;; plugin, ABI glue included (pdk/ABI.md).
;;
;;   - deny a call whose "command" argument runs rm -rf;
;;   - ask before a call whose "path" argument leaves the configured root;
;;   - else abstain.
;;
;; Build: wat2wasm rootguard.wat -o rootguard.wasm
;;
;; Memory: page 0 holds constant data and the JSON scanner's stack; the
;; heap starts at 64 KiB. Each event allocates from the floor up (input,
;; decoded strings, output) and the top goes back to the floor afterwards.
;; The instance's first event configures it (reads plugin.config.root) and
;; what it allocated stays: the floor rises above it.
(module
  (import "toolwarden" "input_read" (func $input_read (param i32 i32) (result i32)))
  (import "toolwarden" "output_write" (func $output_write (param i32 i32) (result i32)))

  (memory (export "memory") 2)

  ;; ------------------------------------------------------------ constants
  (data (i32.const 0) "{\"name\":\"rootguard\",\"version\":\"1.0.0\",\"events\":[\"check\"]}") ;; 58
  (data (i32.const 64) "{\"decision\":\"deny\",\"code\":\"rm_rf\",\"reason\":\"command deletes recursively and by force (rm -rf)\"}") ;; 95
  (data (i32.const 176) "{\"decision\":\"ask\",\"code\":\"path_outside_root\",\"reason\":\"path \\\"") ;; 62
  (data (i32.const 240) "\\\" is outside the root \\\"") ;; 25
  (data (i32.const 272) "\\\"\"}") ;; 4
  (data (i32.const 288) "{\"decision\":\"ask\",\"code\":\"path_outside_root\",\"reason\":\"path is outside the root \\\"") ;; 82
  (data (i32.const 384) "input is not a JSON object") ;; 26
  (data (i32.const 416) "config is not valid JSON") ;; 24
  (data (i32.const 448) "config: want an object") ;; 22
  (data (i32.const 480) "root: want an absolute path (a string starting with /)") ;; 54
  (data (i32.const 544) "call.arguments is not valid JSON") ;; 32
  (data (i32.const 592) "plugin") ;; 6
  (data (i32.const 600) "config") ;; 6
  (data (i32.const 608) "root") ;; 4
  (data (i32.const 616) "call") ;; 4
  (data (i32.const 624) "arguments") ;; 9
  (data (i32.const 640) "command") ;; 7
  (data (i32.const 648) "path") ;; 4
  (data (i32.const 656) "true") ;; 4
  (data (i32.const 664) "false") ;; 5
  (data (i32.const 672) "null") ;; 4
  (data (i32.const 680) "0123456789abcdef") ;; 16
  ;; 1024..1281: the scanner's stack (1 = inside an object, 0 = an array)
  (global $stack i32 (i32.const 1024))
  (global $max_depth i32 (i32.const 256))

  ;; ------------------------------------------------------------ state
  (global $top (mut i32) (i32.const 65536))   ;; heap top
  (global $floor (mut i32) (i32.const 65536)) ;; what survives an event
  (global $esc (mut i32) (i32.const 0))       ;; the last skipped string had an escape
  (global $len (mut i32) (i32.const 0))       ;; second result of string functions
  (global $configured (mut i32) (i32.const 0))
  (global $cfg_err (mut i32) (i32.const 0))   ;; message of a bad config (0: none)
  (global $cfg_err_len (mut i32) (i32.const 0))
  (global $root (mut i32) (i32.const 0))      ;; the cleaned root (0: none)
  (global $root_len (mut i32) (i32.const 0))
  (global $o (mut i32) (i32.const 0))         ;; output cursor

  ;; ------------------------------------------------------------ memory
  ;; $alloc returns n bytes, 8-aligned, growing memory when needed (a trap
  ;; at the plugin's memory limit).
  (func $alloc (param $n i32) (result i32)
    (local $p i32) (local $end i32) (local $pages i32)
    (local.set $p (i32.and (i32.add (global.get $top) (i32.const 7)) (i32.const -8)))
    (local.set $end (i32.add (local.get $p) (local.get $n)))
    (if (i32.lt_u (local.get $end) (local.get $p)) (then unreachable))
    (local.set $pages (i32.wrap_i64 (i64.shr_u
      (i64.add (i64.extend_i32_u (local.get $end)) (i64.const 0xffff)) (i64.const 16))))
    (if (i32.gt_u (local.get $pages) (memory.size))
      (then
        (if (i32.lt_s (memory.grow (i32.sub (local.get $pages) (memory.size))) (i32.const 0))
          (then unreachable))))
    (global.set $top (local.get $end))
    (local.get $p))

  (func $memeq (param $a i32) (param $b i32) (param $n i32) (result i32)
    (block $no
      (loop $next
        (if (i32.eqz (local.get $n)) (then (return (i32.const 1))))
        (br_if $no (i32.ne (i32.load8_u (local.get $a)) (i32.load8_u (local.get $b))))
        (local.set $a (i32.add (local.get $a) (i32.const 1)))
        (local.set $b (i32.add (local.get $b) (i32.const 1)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $next)))
    (i32.const 0))

  ;; ------------------------------------------------------------ scanning JSON
  ;; Every scanner takes the current position p and the end of the input e
  ;; and returns the position after what it scanned, or 0 when the input is
  ;; malformed there (the heap starts at 64 KiB, so 0 is never a position).

  ;; The host sends no white space, so the common case does not enter a
  ;; loop (every loop iteration also runs the host's deadline check).
  (func $ws (param $p i32) (param $e i32) (result i32)
    (local $c i32)
    (if (i32.ge_u (local.get $p) (local.get $e)) (then (return (local.get $p))))
    (if (i32.gt_u (i32.load8_u (local.get $p)) (i32.const 0x20)) (then (return (local.get $p))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $p) (local.get $e)))
        (local.set $c (i32.load8_u (local.get $p)))
        (br_if $done (i32.eqz (i32.or (i32.or (i32.eq (local.get $c) (i32.const 0x20)) (i32.eq (local.get $c) (i32.const 0x09)))
                                      (i32.or (i32.eq (local.get $c) (i32.const 0x0a)) (i32.eq (local.get $c) (i32.const 0x0d))))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $next)))
    (local.get $p))

  ;; $hex4 reads four hex digits at p; -1 if one is not a hex digit.
  ;; $hex4 reads four hex digits at p; -1 if one is not a hex digit. Unrolled.
  (func $hex (param $c i32) (result i32)
    (if (i32.lt_u (i32.sub (local.get $c) (i32.const 0x30)) (i32.const 10))
      (then (return (i32.sub (local.get $c) (i32.const 0x30)))))
    (local.set $c (i32.or (local.get $c) (i32.const 0x20))) ;; lower case
    (if (i32.lt_u (i32.sub (local.get $c) (i32.const 0x61)) (i32.const 6))
      (then (return (i32.sub (local.get $c) (i32.const 0x57)))))
    (i32.const -1))

  (func $hex4 (param $p i32) (result i32)
    (local $a i32) (local $b i32) (local $c i32) (local $d i32)
    (local.set $a (call $hex (i32.load8_u (local.get $p))))
    (local.set $b (call $hex (i32.load8_u offset=1 (local.get $p))))
    (local.set $c (call $hex (i32.load8_u offset=2 (local.get $p))))
    (local.set $d (call $hex (i32.load8_u offset=3 (local.get $p))))
    (if (i32.lt_s (i32.or (i32.or (local.get $a) (local.get $b)) (i32.or (local.get $c) (local.get $d))) (i32.const 0))
      (then (return (i32.const -1))))
    (i32.or (i32.or (i32.shl (local.get $a) (i32.const 12)) (i32.shl (local.get $b) (i32.const 8)))
            (i32.or (i32.shl (local.get $c) (i32.const 4)) (local.get $d))))

  ;; $special has the high bit set in each byte of x that may be '"', '\'
  ;; or below 0x20; the lowest set byte is always exact.
  (func $special (param $x i64) (result i64)
    (local $q i64) (local $b i64)
    (local.set $q (i64.xor (local.get $x) (i64.const 0x2222222222222222)))
    (local.set $b (i64.xor (local.get $x) (i64.const 0x5c5c5c5c5c5c5c5c)))
    (i64.and
      (i64.or (i64.or
        (i64.and (i64.sub (local.get $q) (i64.const 0x0101010101010101)) (i64.xor (local.get $q) (i64.const -1)))
        (i64.and (i64.sub (local.get $b) (i64.const 0x0101010101010101)) (i64.xor (local.get $b) (i64.const -1))))
        (i64.and (i64.sub (local.get $x) (i64.const 0x2020202020202020)) (i64.xor (local.get $x) (i64.const -1))))
      (i64.const 0x8080808080808080)))

  ;; $skip_string skips the string at p (a '"'); sets $esc.
  ;; $skip_string skips the string at p (a '"'); sets $esc. One loop, 8
  ;; bytes a step.
  (func $skip_string (param $p i32) (param $e i32) (result i32)
    (local $c i32) (local $m i64)
    (global.set $esc (i32.const 0))
    (local.set $p (i32.add (local.get $p) (i32.const 1)))
    (loop $next
      (block $at ;; leaves with p at a '"', '\' or control byte
        (if (i32.ge_s (i32.sub (local.get $e) (local.get $p)) (i32.const 8))
          (then
            (local.set $m (call $special (i64.load (local.get $p))))
            (if (i64.eqz (local.get $m))
              (then
                (local.set $p (i32.add (local.get $p) (i32.const 8)))
                (br $next)))
            (local.set $p (i32.add (local.get $p) (i32.wrap_i64 (i64.shr_u (i64.ctz (local.get $m)) (i64.const 3)))))
            (br $at)))
        (if (i32.ge_u (local.get $p) (local.get $e)) (then (return (i32.const 0))))
        (local.set $c (i32.load8_u (local.get $p)))
        (if (i32.and (i32.and (i32.ne (local.get $c) (i32.const 0x22)) (i32.ne (local.get $c) (i32.const 0x5c)))
                     (i32.ge_u (local.get $c) (i32.const 0x20)))
          (then
            (local.set $p (i32.add (local.get $p) (i32.const 1)))
            (br $next))))
      (local.set $c (i32.load8_u (local.get $p)))
      (if (i32.eq (local.get $c) (i32.const 0x22)) (then (return (i32.add (local.get $p) (i32.const 1)))))
      (if (i32.lt_u (local.get $c) (i32.const 0x20)) (then (return (i32.const 0))))
      ;; a backslash
      (global.set $esc (i32.const 1))
      (if (i32.lt_s (i32.sub (local.get $e) (local.get $p)) (i32.const 2)) (then (return (i32.const 0))))
      (local.set $c (i32.load8_u offset=1 (local.get $p)))
      (if (i32.eq (local.get $c) (i32.const 0x75)) ;; \uXXXX
        (then
          (if (i32.lt_s (i32.sub (local.get $e) (local.get $p)) (i32.const 6)) (then (return (i32.const 0))))
          (if (i32.lt_s (call $hex4 (i32.add (local.get $p) (i32.const 2))) (i32.const 0)) (then (return (i32.const 0))))
          (local.set $p (i32.add (local.get $p) (i32.const 6)))
          (br $next)))
      ;; one of " \ / b f n r t
      (if (i32.eqz (i32.or (i32.or (i32.or (i32.eq (local.get $c) (i32.const 0x22)) (i32.eq (local.get $c) (i32.const 0x5c)))
                                   (i32.or (i32.eq (local.get $c) (i32.const 0x2f)) (i32.eq (local.get $c) (i32.const 0x62))))
                           (i32.or (i32.or (i32.eq (local.get $c) (i32.const 0x66)) (i32.eq (local.get $c) (i32.const 0x6e)))
                                   (i32.or (i32.eq (local.get $c) (i32.const 0x72)) (i32.eq (local.get $c) (i32.const 0x74))))))
        (then (return (i32.const 0))))
      (local.set $p (i32.add (local.get $p) (i32.const 2)))
      (br $next))
    (i32.const 0))

  (func $is_digit (param $p i32) (param $e i32) (result i32)
    (local $c i32)
    (if (i32.ge_u (local.get $p) (local.get $e)) (then (return (i32.const 0))))
    (local.set $c (i32.load8_u (local.get $p)))
    (i32.and (i32.ge_u (local.get $c) (i32.const 0x30)) (i32.le_u (local.get $c) (i32.const 0x39))))

  (func $digits (param $p i32) (param $e i32) (result i32)
    (loop $next
      (if (call $is_digit (local.get $p) (local.get $e))
        (then (local.set $p (i32.add (local.get $p) (i32.const 1))) (br $next))))
    (local.get $p))

  ;; $byte_is: p < e and the byte at p is c.
  (func $byte_is (param $p i32) (param $e i32) (param $c i32) (result i32)
    (if (result i32) (i32.lt_u (local.get $p) (local.get $e))
      (then (i32.eq (i32.load8_u (local.get $p)) (local.get $c)))
      (else (i32.const 0))))

  (func $skip_number (param $p i32) (param $e i32) (result i32)
    (local $d i32)
    (if (call $byte_is (local.get $p) (local.get $e) (i32.const 0x2d)) ;; -
      (then (local.set $p (i32.add (local.get $p) (i32.const 1)))))
    (if (call $byte_is (local.get $p) (local.get $e) (i32.const 0x30)) ;; 0
      (then (local.set $p (i32.add (local.get $p) (i32.const 1))))
      (else
        (if (i32.eqz (call $is_digit (local.get $p) (local.get $e))) (then (return (i32.const 0))))
        (local.set $p (call $digits (local.get $p) (local.get $e)))))
    (if (call $byte_is (local.get $p) (local.get $e) (i32.const 0x2e)) ;; .
      (then
        (local.set $d (i32.add (local.get $p) (i32.const 1)))
        (local.set $p (call $digits (local.get $d) (local.get $e)))
        (if (i32.eq (local.get $p) (local.get $d)) (then (return (i32.const 0))))))
    (if (i32.or (call $byte_is (local.get $p) (local.get $e) (i32.const 0x65))
                (call $byte_is (local.get $p) (local.get $e) (i32.const 0x45))) ;; e E
      (then
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (if (i32.or (call $byte_is (local.get $p) (local.get $e) (i32.const 0x2b))
                    (call $byte_is (local.get $p) (local.get $e) (i32.const 0x2d))) ;; + -
          (then (local.set $p (i32.add (local.get $p) (i32.const 1)))))
        (local.set $d (local.get $p))
        (local.set $p (call $digits (local.get $d) (local.get $e)))
        (if (i32.eq (local.get $p) (local.get $d)) (then (return (i32.const 0))))))
    (local.get $p))

  ;; $lit matches the n bytes at s (true, false or null) at p.
  ;; $lit matches the n bytes at s (true, false or null) at p, without a loop.
  (func $lit (param $p i32) (param $e i32) (param $s i32) (param $n i32) (result i32)
    (if (i32.lt_u (i32.sub (local.get $e) (local.get $p)) (local.get $n)) (then (return (i32.const 0))))
    (if (i32.ne (i32.load (local.get $p)) (i32.load (local.get $s))) (then (return (i32.const 0))))
    (if (i32.eq (local.get $n) (i32.const 5))
      (then
        (if (i32.ne (i32.load8_u offset=4 (local.get $p)) (i32.load8_u offset=4 (local.get $s)))
          (then (return (i32.const 0))))))
    (i32.add (local.get $p) (local.get $n)))

  ;; $skip validates and skips the value at p: any JSON value, nested at
  ;; most 256 deep. It keeps its own stack instead of recursing.
  (func $skip (param $p i32) (param $e i32) (result i32)
    (local $depth i32) (local $c i32) (local $obj i32)
    (loop $value
      ;; p is at a value
      (if (i32.ge_u (local.get $p) (local.get $e)) (then (return (i32.const 0))))
      (local.set $c (i32.load8_u (local.get $p)))
      (block $scalar_done
        (if (i32.or (i32.eq (local.get $c) (i32.const 0x7b)) (i32.eq (local.get $c) (i32.const 0x5b))) ;; { [
          (then
            (local.set $depth (i32.add (local.get $depth) (i32.const 1)))
            (if (i32.gt_u (local.get $depth) (global.get $max_depth)) (then (return (i32.const 0))))
            (local.set $obj (i32.eq (local.get $c) (i32.const 0x7b)))
            (i32.store8 (i32.add (global.get $stack) (local.get $depth)) (local.get $obj))
            (local.set $p (call $ws (i32.add (local.get $p) (i32.const 1)) (local.get $e)))
            (if (call $byte_is (local.get $p) (local.get $e) (select (i32.const 0x7d) (i32.const 0x5d) (local.get $obj)))
              (then ;; empty container
                (local.set $p (i32.add (local.get $p) (i32.const 1)))
                (local.set $depth (i32.sub (local.get $depth) (i32.const 1)))
                (br $scalar_done)))
            (if (local.get $obj)
              (then
                (local.set $p (call $key (local.get $p) (local.get $e)))
                (if (i32.eqz (local.get $p)) (then (return (i32.const 0))))))
            (br $value)))
        (if (i32.eq (local.get $c) (i32.const 0x22))
          (then (local.set $p (call $skip_string (local.get $p) (local.get $e))))
          (else (if (i32.eq (local.get $c) (i32.const 0x74))
            (then (local.set $p (call $lit (local.get $p) (local.get $e) (i32.const 656) (i32.const 4))))
            (else (if (i32.eq (local.get $c) (i32.const 0x66))
              (then (local.set $p (call $lit (local.get $p) (local.get $e) (i32.const 664) (i32.const 5))))
              (else (if (i32.eq (local.get $c) (i32.const 0x6e))
                (then (local.set $p (call $lit (local.get $p) (local.get $e) (i32.const 672) (i32.const 4))))
                (else (local.set $p (call $skip_number (local.get $p) (local.get $e)))))))))))
        (if (i32.eqz (local.get $p)) (then (return (i32.const 0)))))
      ;; after a value: close containers, or go on to the next item
      (loop $after
        (if (i32.eqz (local.get $depth)) (then (return (local.get $p))))
        (local.set $p (call $ws (local.get $p) (local.get $e)))
        (if (i32.ge_u (local.get $p) (local.get $e)) (then (return (i32.const 0))))
        (local.set $c (i32.load8_u (local.get $p)))
        (local.set $obj (i32.load8_u (i32.add (global.get $stack) (local.get $depth))))
        (if (i32.eq (local.get $c) (i32.const 0x2c)) ;; ,
          (then
            (local.set $p (call $ws (i32.add (local.get $p) (i32.const 1)) (local.get $e)))
            (if (local.get $obj)
              (then
                (local.set $p (call $key (local.get $p) (local.get $e)))
                (if (i32.eqz (local.get $p)) (then (return (i32.const 0))))))
            (br $value)))
        (if (i32.eq (local.get $c) (select (i32.const 0x7d) (i32.const 0x5d) (local.get $obj)))
          (then
            (local.set $p (i32.add (local.get $p) (i32.const 1)))
            (local.set $depth (i32.sub (local.get $depth) (i32.const 1)))
            (br $after)))
        (return (i32.const 0))))
    (i32.const 0))

  ;; $key skips `"name" :` and the white space after it.
  (func $key (param $p i32) (param $e i32) (result i32)
    (if (i32.eqz (call $byte_is (local.get $p) (local.get $e) (i32.const 0x22))) (then (return (i32.const 0))))
    (local.set $p (call $skip_string (local.get $p) (local.get $e)))
    (if (i32.eqz (local.get $p)) (then (return (i32.const 0))))
    (local.set $p (call $ws (local.get $p) (local.get $e)))
    (if (i32.eqz (call $byte_is (local.get $p) (local.get $e) (i32.const 0x3a))) (then (return (i32.const 0))))
    (call $ws (i32.add (local.get $p) (i32.const 1)) (local.get $e)))

  ;; ------------------------------------------------------------ strings
  ;; $put_utf8 writes code point r as UTF-8 at o; returns the new o.
  (func $put_utf8 (param $o i32) (param $r i32) (result i32)
    (if (i32.lt_u (local.get $r) (i32.const 0x80))
      (then
        (i32.store8 (local.get $o) (local.get $r))
        (return (i32.add (local.get $o) (i32.const 1)))))
    (if (i32.lt_u (local.get $r) (i32.const 0x800))
      (then
        (i32.store8 (local.get $o) (i32.or (i32.const 0xc0) (i32.shr_u (local.get $r) (i32.const 6))))
        (i32.store8 offset=1 (local.get $o) (i32.or (i32.const 0x80) (i32.and (local.get $r) (i32.const 0x3f))))
        (return (i32.add (local.get $o) (i32.const 2)))))
    (if (i32.lt_u (local.get $r) (i32.const 0x10000))
      (then
        (i32.store8 (local.get $o) (i32.or (i32.const 0xe0) (i32.shr_u (local.get $r) (i32.const 12))))
        (i32.store8 offset=1 (local.get $o) (i32.or (i32.const 0x80) (i32.and (i32.shr_u (local.get $r) (i32.const 6)) (i32.const 0x3f))))
        (i32.store8 offset=2 (local.get $o) (i32.or (i32.const 0x80) (i32.and (local.get $r) (i32.const 0x3f))))
        (return (i32.add (local.get $o) (i32.const 3)))))
    (i32.store8 (local.get $o) (i32.or (i32.const 0xf0) (i32.shr_u (local.get $r) (i32.const 18))))
    (i32.store8 offset=1 (local.get $o) (i32.or (i32.const 0x80) (i32.and (i32.shr_u (local.get $r) (i32.const 12)) (i32.const 0x3f))))
    (i32.store8 offset=2 (local.get $o) (i32.or (i32.const 0x80) (i32.and (i32.shr_u (local.get $r) (i32.const 6)) (i32.const 0x3f))))
    (i32.store8 offset=3 (local.get $o) (i32.or (i32.const 0x80) (i32.and (local.get $r) (i32.const 0x3f))))
    (i32.add (local.get $o) (i32.const 4)))

  ;; $decode decodes a validated string body with escapes, [s, e), into the
  ;; heap; returns where, with the length in $len. A surrogate that is not
  ;; part of a pair becomes U+FFFD.
  (func $decode (param $s i32) (param $e i32) (result i32)
    (local $out i32) (local $o i32) (local $c i32) (local $r i32) (local $r2 i32)
    (local.set $out (call $alloc (i32.sub (local.get $e) (local.get $s))))
    (local.set $o (local.get $out))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $s) (local.get $e)))
        (local.set $c (i32.load8_u (local.get $s)))
        (if (i32.ne (local.get $c) (i32.const 0x5c))
          (then
            (i32.store8 (local.get $o) (local.get $c))
            (local.set $o (i32.add (local.get $o) (i32.const 1)))
            (local.set $s (i32.add (local.get $s) (i32.const 1)))
            (br $next)))
        (local.set $c (i32.load8_u offset=1 (local.get $s)))
        (local.set $s (i32.add (local.get $s) (i32.const 2)))
        (if (i32.eq (local.get $c) (i32.const 0x75)) ;; \uXXXX
          (then
            (local.set $r (call $hex4 (local.get $s)))
            (local.set $s (i32.add (local.get $s) (i32.const 4)))
            (if (i32.and (i32.ge_u (local.get $r) (i32.const 0xd800)) (i32.lt_u (local.get $r) (i32.const 0xe000)))
              (then
                (if (i32.and (i32.lt_u (local.get $r) (i32.const 0xdc00))
                             (i32.ge_s (i32.sub (local.get $e) (local.get $s)) (i32.const 6)))
                  (then
                    (if (i32.and (i32.eq (i32.load8_u (local.get $s)) (i32.const 0x5c))
                                 (i32.eq (i32.load8_u offset=1 (local.get $s)) (i32.const 0x75)))
                      (then
                        (local.set $r2 (call $hex4 (i32.add (local.get $s) (i32.const 2))))
                        (if (i32.and (i32.ge_s (local.get $r2) (i32.const 0xdc00)) (i32.lt_s (local.get $r2) (i32.const 0xe000)))
                          (then
                            (local.set $r (i32.add (i32.const 0x10000)
                              (i32.add (i32.shl (i32.sub (local.get $r) (i32.const 0xd800)) (i32.const 10))
                                       (i32.sub (local.get $r2) (i32.const 0xdc00)))))
                            (local.set $s (i32.add (local.get $s) (i32.const 6)))))))))
                (if (i32.and (i32.ge_u (local.get $r) (i32.const 0xd800)) (i32.lt_u (local.get $r) (i32.const 0xe000)))
                  (then (local.set $r (i32.const 0xfffd))))))
            (local.set $o (call $put_utf8 (local.get $o) (local.get $r)))
            (br $next)))
        (if (i32.eq (local.get $c) (i32.const 0x62)) (then (local.set $c (i32.const 0x08))))
        (if (i32.eq (local.get $c) (i32.const 0x66)) (then (local.set $c (i32.const 0x0c))))
        (if (i32.eq (local.get $c) (i32.const 0x6e)) (then (local.set $c (i32.const 0x0a))))
        (if (i32.eq (local.get $c) (i32.const 0x72)) (then (local.set $c (i32.const 0x0d))))
        (if (i32.eq (local.get $c) (i32.const 0x74)) (then (local.set $c (i32.const 0x09))))
        (i32.store8 (local.get $o) (local.get $c)) ;; or " \ /
        (local.set $o (i32.add (local.get $o) (i32.const 1)))
        (br $next)))
    (global.set $len (i32.sub (local.get $o) (local.get $out)))
    (local.get $out))

  ;; $string reads the string value at p: its text (decoded when it has
  ;; escapes), with the length in $len; 0 if p is not a well-formed string.
  (func $string (param $p i32) (param $e i32) (result i32)
    (local $end i32)
    (if (i32.eqz (call $byte_is (local.get $p) (local.get $e) (i32.const 0x22))) (then (return (i32.const 0))))
    (local.set $end (call $skip_string (local.get $p) (local.get $e)))
    (if (i32.eqz (local.get $end)) (then (return (i32.const 0))))
    (if (global.get $esc)
      (then (return (call $decode (i32.add (local.get $p) (i32.const 1)) (i32.sub (local.get $end) (i32.const 1))))))
    (global.set $len (i32.sub (i32.sub (local.get $end) (local.get $p)) (i32.const 2)))
    (i32.add (local.get $p) (i32.const 1)))

  ;; $get returns where the first member of the object at v named [k, k+kn)
  ;; starts, or 0 when v is not an object, has no such member, or is
  ;; malformed before it. Names are compared after decoding escapes.
  (func $get (param $v i32) (param $e i32) (param $k i32) (param $kn i32) (result i32)
    (local $p i32) (local $ks i32) (local $ke i32) (local $val i32) (local $d i32)
    (if (i32.eqz (local.get $v)) (then (return (i32.const 0))))
    (if (i32.eqz (call $byte_is (local.get $v) (local.get $e) (i32.const 0x7b))) (then (return (i32.const 0))))
    (local.set $p (call $ws (i32.add (local.get $v) (i32.const 1)) (local.get $e)))
    (loop $member
      ;; p is at a member's name
      (if (i32.eqz (call $byte_is (local.get $p) (local.get $e) (i32.const 0x22))) (then (return (i32.const 0))))
      (local.set $ks (i32.add (local.get $p) (i32.const 1)))
      (local.set $ke (call $skip_string (local.get $p) (local.get $e)))
      (if (i32.eqz (local.get $ke)) (then (return (i32.const 0))))
      (local.set $ke (i32.sub (local.get $ke) (i32.const 1))) ;; the closing quote
      (if (global.get $esc)
        (then
          (local.set $ks (call $decode (local.get $ks) (local.get $ke)))
          (local.set $d (global.get $len)))
        (else (local.set $d (i32.sub (local.get $ke) (local.get $ks)))))
      (local.set $p (call $ws (i32.add (local.get $ke) (i32.const 1)) (local.get $e)))
      (if (i32.eqz (call $byte_is (local.get $p) (local.get $e) (i32.const 0x3a))) (then (return (i32.const 0))))
      (local.set $val (call $ws (i32.add (local.get $p) (i32.const 1)) (local.get $e)))
      (if (i32.eq (local.get $d) (local.get $kn))
        (then
          (if (call $memeq (local.get $ks) (local.get $k) (local.get $kn))
            (then (return (local.get $val))))))
      (local.set $p (call $skip (local.get $val) (local.get $e)))
      (if (i32.eqz (local.get $p)) (then (return (i32.const 0))))
      (local.set $p (call $ws (local.get $p) (local.get $e)))
      (if (call $byte_is (local.get $p) (local.get $e) (i32.const 0x2c))
        (then
          (local.set $p (call $ws (i32.add (local.get $p) (i32.const 1)) (local.get $e)))
          (br $member))))
    (i32.const 0))

  ;; ------------------------------------------------------------ the policy
  ;; $clean resolves "." and ".." and repeated slashes in the path [p, p+n),
  ;; lexically, like Go's path.Clean, as an absolute path ("/.." is "/").
  ;; Returns where, with the length in $len.
  (func $clean (param $p i32) (param $n i32) (result i32)
    (local $out i32) (local $w i32) (local $i i32) (local $start i32) (local $sn i32)
    (local.set $out (call $alloc (i32.add (local.get $n) (i32.const 1))))
    (i32.store8 (local.get $out) (i32.const 0x2f))
    (local.set $w (i32.const 1))
    (block $done
      (loop $segment
        ;; skip slashes
        (block $s (loop $l
          (br_if $s (i32.ge_u (local.get $i) (local.get $n)))
          (br_if $s (i32.ne (i32.load8_u (i32.add (local.get $p) (local.get $i))) (i32.const 0x2f)))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br $l)))
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $start (local.get $i))
        (block $s (loop $l
          (br_if $s (i32.ge_u (local.get $i) (local.get $n)))
          (br_if $s (i32.eq (i32.load8_u (i32.add (local.get $p) (local.get $i))) (i32.const 0x2f)))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br $l)))
        (local.set $sn (i32.sub (local.get $i) (local.get $start)))
        ;; "."
        (if (i32.and (i32.eq (local.get $sn) (i32.const 1))
                     (i32.eq (i32.load8_u (i32.add (local.get $p) (local.get $start))) (i32.const 0x2e)))
          (then (br $segment)))
        ;; "..": back to the last '/'
        (if (i32.and (i32.eq (local.get $sn) (i32.const 2))
                     (i32.eq (i32.load16_u (i32.add (local.get $p) (local.get $start))) (i32.const 0x2e2e)))
          (then
            (block $s (loop $l
              (br_if $s (i32.le_u (local.get $w) (i32.const 1)))
              (br_if $s (i32.eq (i32.load8_u (i32.add (local.get $out) (i32.sub (local.get $w) (i32.const 1)))) (i32.const 0x2f)))
              (local.set $w (i32.sub (local.get $w) (i32.const 1)))
              (br $l)))
            (if (i32.gt_u (local.get $w) (i32.const 1)) (then (local.set $w (i32.sub (local.get $w) (i32.const 1)))))
            (br $segment)))
        (if (i32.gt_u (local.get $w) (i32.const 1))
          (then
            (i32.store8 (i32.add (local.get $out) (local.get $w)) (i32.const 0x2f))
            (local.set $w (i32.add (local.get $w) (i32.const 1)))))
        (memory.copy (i32.add (local.get $out) (local.get $w)) (i32.add (local.get $p) (local.get $start)) (local.get $sn))
        (local.set $w (i32.add (local.get $w) (local.get $sn)))
        (br $segment)))
    (global.set $len (local.get $w))
    (local.get $out))

  ;; $within: the clean path [p, p+n) is the root or below it.
  (func $within (param $p i32) (param $n i32) (result i32)
    (if (i32.eq (global.get $root_len) (i32.const 1)) (then (return (i32.const 1))))
    (if (i32.lt_u (local.get $n) (global.get $root_len)) (then (return (i32.const 0))))
    (if (i32.eqz (call $memeq (local.get $p) (global.get $root) (global.get $root_len))) (then (return (i32.const 0))))
    (if (i32.eq (local.get $n) (global.get $root_len)) (then (return (i32.const 1))))
    (i32.eq (i32.load8_u (i32.add (local.get $p) (global.get $root_len))) (i32.const 0x2f)))

  (func $is_letter (param $c i32) (result i32)
    (local.set $c (i32.or (local.get $c) (i32.const 0x20)))
    (i32.and (i32.ge_u (local.get $c) (i32.const 0x61)) (i32.le_u (local.get $c) (i32.const 0x7a))))

  (func $is_word (param $c i32) (result i32)
    (i32.or (i32.or (call $is_letter (local.get $c))
                    (i32.and (i32.ge_u (local.get $c) (i32.const 0x30)) (i32.le_u (local.get $c) (i32.const 0x39))))
            (i32.or (i32.eq (local.get $c) (i32.const 0x5f))
                    (i32.or (i32.eq (local.get $c) (i32.const 0x2e)) (i32.eq (local.get $c) (i32.const 0x2d))))))

  (func $is_space (param $c i32) (result i32)
    (i32.or (i32.or (i32.eq (local.get $c) (i32.const 0x20)) (i32.eq (local.get $c) (i32.const 0x09)))
            (i32.or (i32.eq (local.get $c) (i32.const 0x0a)) (i32.eq (local.get $c) (i32.const 0x0d)))))

  ;; $rm_rf: the command [p, p+n) has "rm" at the start of a word, then
  ;; white space and flag words ('-' and letters, separated by white space)
  ;; that hold r (or R) and f.
  (func $rm_rf (param $p i32) (param $n i32) (result i32)
    (local $i i32) (local $j i32) (local $k i32) (local $r i32) (local $f i32) (local $c i32)
    (block $none
      (loop $at
        (br_if $none (i32.gt_u (i32.add (local.get $i) (i32.const 2)) (local.get $n)))
        (block $next
          (br_if $next (i32.ne (i32.load16_u (i32.add (local.get $p) (local.get $i))) (i32.const 0x6d72))) ;; "rm"
          (if (local.get $i)
            (then (br_if $next (call $is_word (i32.load8_u (i32.sub (i32.add (local.get $p) (local.get $i)) (i32.const 1)))))))
          (local.set $j (i32.add (local.get $i) (i32.const 2)))
          (local.set $r (i32.const 0))
          (local.set $f (i32.const 0))
          (block $flags_done
            (loop $flag
              (local.set $k (local.get $j))
              (block $s (loop $l
                (br_if $s (i32.ge_u (local.get $k) (local.get $n)))
                (br_if $s (i32.eqz (call $is_space (i32.load8_u (i32.add (local.get $p) (local.get $k))))))
                (local.set $k (i32.add (local.get $k) (i32.const 1)))
                (br $l)))
              (br_if $flags_done (i32.eq (local.get $k) (local.get $j)))
              (br_if $flags_done (i32.ge_u (i32.add (local.get $k) (i32.const 1)) (local.get $n)))
              (br_if $flags_done (i32.ne (i32.load8_u (i32.add (local.get $p) (local.get $k))) (i32.const 0x2d)))
              (br_if $flags_done (i32.eqz (call $is_letter (i32.load8_u (i32.add (i32.add (local.get $p) (local.get $k)) (i32.const 1))))))
              (local.set $k (i32.add (local.get $k) (i32.const 1)))
              (block $s (loop $l
                (br_if $s (i32.ge_u (local.get $k) (local.get $n)))
                (local.set $c (i32.load8_u (i32.add (local.get $p) (local.get $k))))
                (br_if $s (i32.eqz (call $is_letter (local.get $c))))
                (if (i32.or (i32.eq (local.get $c) (i32.const 0x72)) (i32.eq (local.get $c) (i32.const 0x52)))
                  (then (local.set $r (i32.const 1))))
                (if (i32.eq (local.get $c) (i32.const 0x66)) (then (local.set $f (i32.const 1))))
                (local.set $k (i32.add (local.get $k) (i32.const 1)))
                (br $l)))
              (local.set $j (local.get $k))
              (br $flag)))
          (if (i32.and (local.get $r) (local.get $f)) (then (return (i32.const 1)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $at)))
    (i32.const 0))

  ;; ------------------------------------------------------------ output
  (func $put (param $src i32) (param $n i32)
    (memory.copy (global.get $o) (local.get $src) (local.get $n))
    (global.set $o (i32.add (global.get $o) (local.get $n))))

  (func $put_byte (param $c i32)
    (i32.store8 (global.get $o) (local.get $c))
    (global.set $o (i32.add (global.get $o) (i32.const 1))))

  ;; $utf8_len is the length of the valid UTF-8 sequence at s, or 0.
  (func $utf8_len (param $s i32) (param $e i32) (result i32)
    (local $c i32) (local $n i32) (local $lo i32) (local $hi i32) (local $i i32) (local $x i32)
    (local.set $c (i32.load8_u (local.get $s)))
    (local.set $lo (i32.const 0x80))
    (local.set $hi (i32.const 0xbf))
    (if (i32.and (i32.ge_u (local.get $c) (i32.const 0xc2)) (i32.le_u (local.get $c) (i32.const 0xdf)))
      (then (local.set $n (i32.const 2)))
      (else (if (i32.and (i32.ge_u (local.get $c) (i32.const 0xe0)) (i32.le_u (local.get $c) (i32.const 0xef)))
        (then
          (local.set $n (i32.const 3))
          (if (i32.eq (local.get $c) (i32.const 0xe0)) (then (local.set $lo (i32.const 0xa0))))
          (if (i32.eq (local.get $c) (i32.const 0xed)) (then (local.set $hi (i32.const 0x9f)))))
        (else (if (i32.and (i32.ge_u (local.get $c) (i32.const 0xf0)) (i32.le_u (local.get $c) (i32.const 0xf4)))
          (then
            (local.set $n (i32.const 4))
            (if (i32.eq (local.get $c) (i32.const 0xf0)) (then (local.set $lo (i32.const 0x90))))
            (if (i32.eq (local.get $c) (i32.const 0xf4)) (then (local.set $hi (i32.const 0x8f)))))
          (else (return (i32.const 0))))))))
    (if (i32.lt_u (i32.sub (local.get $e) (local.get $s)) (local.get $n)) (then (return (i32.const 0))))
    (local.set $x (i32.load8_u offset=1 (local.get $s)))
    (if (i32.or (i32.lt_u (local.get $x) (local.get $lo)) (i32.gt_u (local.get $x) (local.get $hi))) (then (return (i32.const 0))))
    (local.set $i (i32.const 2))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $x (i32.load8_u (i32.add (local.get $s) (local.get $i))))
        (if (i32.or (i32.lt_u (local.get $x) (i32.const 0x80)) (i32.gt_u (local.get $x) (i32.const 0xbf))) (then (return (i32.const 0))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (local.get $n))

  ;; $put_json writes [p, p+n) inside a JSON string: quotes, backslashes and
  ;; control characters escaped, invalid UTF-8 as U+FFFD. At most 6 bytes
  ;; out per byte in.
  (func $put_json (param $p i32) (param $n i32)
    (local $e i32) (local $c i32) (local $k i32)
    (local.set $e (i32.add (local.get $p) (local.get $n)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $p) (local.get $e)))
        ;; 8 plain ASCII bytes at a time
        (if (i32.ge_s (i32.sub (local.get $e) (local.get $p)) (i32.const 8))
          (then
            (if (i64.eqz (i64.or (call $special (i64.load (local.get $p)))
                                 (i64.and (i64.load (local.get $p)) (i64.const 0x8080808080808080))))
              (then
                (call $put (local.get $p) (i32.const 8))
                (local.set $p (i32.add (local.get $p) (i32.const 8)))
                (br $next)))))
        (local.set $c (i32.load8_u (local.get $p)))
        (block $escaped
          (if (i32.ge_u (local.get $c) (i32.const 0x80))
            (then
              (local.set $k (call $utf8_len (local.get $p) (local.get $e)))
              (if (local.get $k)
                (then
                  (call $put (local.get $p) (local.get $k))
                  (local.set $p (i32.add (local.get $p) (local.get $k)))
                  (br $next)))
              (call $put_byte (i32.const 0x5c))
              (call $put_byte (i32.const 0x75))
              (call $put_byte (i32.const 0x66))
              (call $put_byte (i32.const 0x66))
              (call $put_byte (i32.const 0x66))
              (call $put_byte (i32.const 0x64))
              (br $escaped)))
          (if (i32.or (i32.eq (local.get $c) (i32.const 0x22)) (i32.eq (local.get $c) (i32.const 0x5c)))
            (then (call $put_byte (i32.const 0x5c)) (call $put_byte (local.get $c)) (br $escaped)))
          (if (i32.ge_u (local.get $c) (i32.const 0x20))
            (then (call $put_byte (local.get $c)) (br $escaped)))
          (call $put_byte (i32.const 0x5c))
          (if (i32.eq (local.get $c) (i32.const 0x0a)) (then (call $put_byte (i32.const 0x6e)) (br $escaped)))
          (if (i32.eq (local.get $c) (i32.const 0x09)) (then (call $put_byte (i32.const 0x74)) (br $escaped)))
          (if (i32.eq (local.get $c) (i32.const 0x0d)) (then (call $put_byte (i32.const 0x72)) (br $escaped)))
          (call $put_byte (i32.const 0x75))
          (call $put_byte (i32.const 0x30))
          (call $put_byte (i32.const 0x30))
          (call $put_byte (i32.load8_u offset=680 (i32.shr_u (local.get $c) (i32.const 4))))
          (call $put_byte (i32.load8_u offset=680 (i32.and (local.get $c) (i32.const 15)))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $next))))

  ;; $fail writes a plain-text message and returns the ABI code.
  (func $fail (param $code i32) (param $msg i32) (param $n i32) (result i32)
    (drop (call $output_write (local.get $msg) (local.get $n)))
    (local.get $code))

  ;; ------------------------------------------------------------ events
  ;; $configure reads plugin.config of the envelope at v, once per instance.
  (func $configure (param $v i32) (param $e i32)
    (local $cfg i32) (local $end i32) (local $r i32) (local $s i32)
    (global.set $configured (i32.const 1))
    (local.set $cfg (call $get (call $get (local.get $v) (local.get $e) (i32.const 592) (i32.const 6))
                               (local.get $e) (i32.const 600) (i32.const 6)))
    (if (i32.eqz (local.get $cfg)) (then (return))) ;; no config: {}
    (if (i32.ge_u (local.get $cfg) (local.get $e)) (then (return)))
    (local.set $end (call $skip (local.get $cfg) (local.get $e)))
    (if (i32.eqz (local.get $end))
      (then
        (global.set $cfg_err (i32.const 416))
        (global.set $cfg_err_len (i32.const 24))
        (return)))
    (if (i32.ne (i32.load8_u (local.get $cfg)) (i32.const 0x7b))
      (then
        (global.set $cfg_err (i32.const 448))
        (global.set $cfg_err_len (i32.const 22))
        (return)))
    (local.set $r (call $get (local.get $cfg) (local.get $end) (i32.const 608) (i32.const 4)))
    (if (i32.eqz (local.get $r)) (then (return)))
    (local.set $s (call $string (local.get $r) (local.get $end)))
    (if (i32.or (i32.eqz (local.get $s)) (i32.eqz (global.get $len)))
      (then (global.set $cfg_err (i32.const 480)) (global.set $cfg_err_len (i32.const 54)) (return)))
    (if (i32.ne (i32.load8_u (local.get $s)) (i32.const 0x2f))
      (then (global.set $cfg_err (i32.const 480)) (global.set $cfg_err_len (i32.const 54)) (return)))
    (global.set $root (call $clean (local.get $s) (global.get $len)))
    (global.set $root_len (global.get $len)))

  (func $check (param $v i32) (param $e i32) (result i32)
    (local $args i32) (local $x i32) (local $s i32) (local $n i32) (local $j i32)
    (local.set $args (call $get (call $get (local.get $v) (local.get $e) (i32.const 616) (i32.const 4))
                                (local.get $e) (i32.const 624) (i32.const 9)))
    (if (i32.eqz (local.get $args)) (then (return (i32.const 0)))) ;; abstain
    (if (i32.ge_u (local.get $args) (local.get $e)) (then (return (i32.const 0))))
    (if (i32.eqz (call $skip (local.get $args) (local.get $e)))
      (then (return (call $fail (i32.const 2) (i32.const 544) (i32.const 32)))))
    (if (i32.ne (i32.load8_u (local.get $args)) (i32.const 0x7b)) (then (return (i32.const 0))))
    ;; deny rm -rf
    (local.set $x (call $get (local.get $args) (local.get $e) (i32.const 640) (i32.const 7)))
    (if (local.get $x)
      (then
        (local.set $s (call $string (local.get $x) (local.get $e)))
        (if (local.get $s)
          (then
            (if (call $rm_rf (local.get $s) (global.get $len))
              (then
                (drop (call $output_write (i32.const 64) (i32.const 95)))
                (return (i32.const 0))))))))
    ;; ask outside the root
    (if (i32.eqz (global.get $root)) (then (return (i32.const 0))))
    (local.set $x (call $get (local.get $args) (local.get $e) (i32.const 648) (i32.const 4)))
    (if (i32.eqz (local.get $x)) (then (return (i32.const 0))))
    (local.set $s (call $string (local.get $x) (local.get $e)))
    (if (i32.eqz (local.get $s)) (then (return (i32.const 0))))
    (local.set $n (global.get $len))
    (if (i32.or (i32.eqz (local.get $n)) (i32.ne (i32.load8_u (local.get $s)) (i32.const 0x2f)))
      (then ;; relative: join it to the root
        (local.set $j (call $alloc (i32.add (i32.add (global.get $root_len) (i32.const 1)) (local.get $n))))
        (memory.copy (local.get $j) (global.get $root) (global.get $root_len))
        (i32.store8 (i32.add (local.get $j) (global.get $root_len)) (i32.const 0x2f))
        (memory.copy (i32.add (i32.add (local.get $j) (global.get $root_len)) (i32.const 1)) (local.get $s) (local.get $n))
        (local.set $s (local.get $j))
        (local.set $n (i32.add (i32.add (global.get $root_len) (i32.const 1)) (local.get $n)))))
    (local.set $s (call $clean (local.get $s) (local.get $n)))
    (local.set $n (global.get $len))
    (if (call $within (local.get $s) (local.get $n)) (then (return (i32.const 0))))
    ;; {"decision":"ask",...,"reason":"path \"<p>\" is outside the root \"<root>\""}
    (local.set $j (call $alloc (i32.add (i32.const 192) (i32.mul (i32.const 6) (i32.add (local.get $n) (global.get $root_len))))))
    (global.set $o (local.get $j))
    (if (i32.le_u (local.get $n) (i32.const 200))
      (then
        (call $put (i32.const 176) (i32.const 62))
        (call $put_json (local.get $s) (local.get $n))
        (call $put (i32.const 240) (i32.const 25)))
      (else (call $put (i32.const 288) (i32.const 82))))
    (call $put_json (global.get $root) (global.get $root_len))
    (call $put (i32.const 272) (i32.const 4))
    (if (call $output_write (local.get $j) (i32.sub (global.get $o) (local.get $j)))
      (then (return (i32.const 3))))
    (i32.const 0))

  (func $event (param $event i32) (param $in i32) (param $e i32) (result i32)
    (local $v i32)
    (local.set $v (call $ws (local.get $in) (local.get $e)))
    (if (i32.eqz (call $byte_is (local.get $v) (local.get $e) (i32.const 0x7b)))
      (then (return (call $fail (i32.const 2) (i32.const 384) (i32.const 26)))))
    (if (i32.eqz (global.get $configured)) (then (call $configure (local.get $v) (local.get $e))))
    (if (global.get $cfg_err)
      (then (return (call $fail (i32.const 4) (global.get $cfg_err) (global.get $cfg_err_len)))))
    (if (i32.eqz (local.get $event)) ;; describe
      (then
        (drop (call $output_write (i32.const 0) (i32.const 57)))
        (return (i32.const 0))))
    (if (i32.eq (local.get $event) (i32.const 2)) ;; check
      (then (return (call $check (local.get $v) (local.get $e)))))
    (i32.const 1)) ;; list, observe and unknown events: not handled

  ;; ------------------------------------------------------------ exports
  (func (export "toolwarden_abi_v1"))

  (func (export "toolwarden_handle") (param $event i32) (param $input_len i32) (result i32)
    (local $in i32) (local $n i32) (local $got i32) (local $keep i32) (local $code i32)
    (local.set $keep (i32.eqz (global.get $configured)))
    (local.set $in (call $alloc (local.get $input_len)))
    (block $read
      (loop $more
        (br_if $read (i32.ge_u (local.get $n) (local.get $input_len)))
        (local.set $got (call $input_read (i32.add (local.get $in) (local.get $n)) (i32.sub (local.get $input_len) (local.get $n))))
        (br_if $read (i32.eqz (local.get $got)))
        (local.set $n (i32.add (local.get $n) (local.get $got)))
        (br $more)))
    (local.set $code (call $event (local.get $event) (local.get $in) (i32.add (local.get $in) (local.get $n))))
    ;; What the configuring event allocated (the root) stays; the rest goes.
    (if (i32.and (local.get $keep) (global.get $configured))
      (then (global.set $floor (global.get $top)))
      (else (global.set $top (global.get $floor))))
    (local.get $code))
)
