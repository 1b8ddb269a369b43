;; A list-only test plugin: it hides the tools its config names. Its output is its config table as
;; is, so config = { hide = ["a", "b"] } hides a and b. It finds the config as the last member of
;; the envelope, where the host writes it: a shortcut for tests only (guests must not depend on key
;; order, pdk/ABI.md section 4). It has no check handler, so a call to a tool it hides meets no
;; other objection from it. Build: wat2wasm hidelist.wat -o hidelist.wasm
(module
  (import "toolwarden" "input_read" (func $input_read (param i32 i32) (result i32)))
  (import "toolwarden" "output_write" (func $output_write (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"name\":\"hidelist\",\"version\":\"1.0.0\",\"events\":[\"list\"]}") ;; 55 bytes
  (data (i32.const 64) "\"config\":") ;; 9 bytes
  (func (export "toolwarden_abi_v1"))

  ;; $at is 1 when the 9 bytes at $p are "config": (with the quotes and the colon).
  (func $at (param $p i32) (result i32)
    (local $i i32)
    (block $no
      (loop $l
        (br_if $no (i32.ne (i32.load8_u (i32.add (local.get $p) (local.get $i)))
                           (i32.load8_u (i32.add (i32.const 64) (local.get $i)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br_if $l (i32.lt_u (local.get $i) (i32.const 9))))
      (return (i32.const 1)))
    (i32.const 0))

  (func (export "toolwarden_handle") (param $event i32) (param $len i32) (result i32)
    (local $p i32) (local $end i32) (local $need i32)
    (if (i32.eqz (local.get $event)) ;; describe
      (then
        (drop (call $output_write (i32.const 0) (i32.const 55)))
        (return (i32.const 0))))
    (if (i32.ne (local.get $event) (i32.const 1)) ;; anything but list: not handled
      (then (return (i32.const 1))))
    ;; the input goes at 1024: grow memory to fit it
    (local.set $end (i32.add (i32.const 1024) (local.get $len)))
    (local.set $need (i32.sub (i32.shr_u (i32.add (local.get $end) (i32.const 65535)) (i32.const 16)) (memory.size)))
    (if (i32.gt_s (local.get $need) (i32.const 0))
      (then (if (i32.eq (memory.grow (local.get $need)) (i32.const -1)) (then (return (i32.const 2))))))
    (drop (call $input_read (i32.const 1024) (local.get $len)))
    ;; the last "config": in the input, then everything after it but the closing "}}"
    (local.set $p (i32.sub (local.get $end) (i32.const 9)))
    (block $found
      (loop $back
        (br_if $found (call $at (local.get $p)))
        (local.set $p (i32.sub (local.get $p) (i32.const 1)))
        (br_if $back (i32.ge_u (local.get $p) (i32.const 1024))))
      (return (i32.const 2)))
    (local.set $p (i32.add (local.get $p) (i32.const 9)))
    (drop (call $output_write (local.get $p) (i32.sub (i32.sub (local.get $end) (i32.const 2)) (local.get $p))))
    (i32.const 0)))
