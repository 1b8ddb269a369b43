;; A plugin whose check is pure guest work: 10,000 iterations of a loop
;; that calls a small function, then no opinion (empty output). The
;; interrupt benchmark (bench_interrupt_test.go) uses it to measure what
;; each way of stopping guests costs a loop and a call.
;; Build: wat2wasm guestloop.wat -o guestloop.wasm
(module
  (import "toolwarden" "output_write" (func $output_write (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (global $sink (mut i32) (i32.const 0))
  (data (i32.const 0) "{\"name\":\"guestloop\",\"version\":\"1.0.0\",\"events\":[\"check\"]}")
  (func $mix (param $x i32) (result i32)
    (i32.xor (i32.mul (local.get $x) (i32.const 31)) (i32.shr_u (local.get $x) (i32.const 3))))
  (func (export "toolwarden_abi_v1"))
  (func (export "toolwarden_handle") (param $event i32) (param $len i32) (result i32)
    (local $i i32) (local $acc i32)
    (if (i32.eqz (local.get $event))
      (then
        (drop (call $output_write (i32.const 0) (i32.const 57)))
        (return (i32.const 0))))
    (local.set $i (i32.const 10000))
    (loop $spin
      (local.set $acc (call $mix (i32.add (local.get $acc) (local.get $i))))
      (local.set $i (i32.sub (local.get $i) (i32.const 1)))
      (br_if $spin (local.get $i)))
    (global.set $sink (local.get $acc))
    (i32.const 0)))
