;; A plugin that reads its config slowly: the first event an instance
;; handles (when the PDKs configure) spins for a while, later events allow
;; at once. The host must configure every instance under the init
;; deadline, not in the first check it serves (TestNewInstancesConfigure
;; UnderTheInitDeadline). Build: wat2wasm slowconfig.wat -o slowconfig.wasm
(module
  (import "toolwarden" "output_write" (func $output_write (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (global $configured (mut i32) (i32.const 0))
  (data (i32.const 0) "{\"name\":\"slowconfig\",\"version\":\"1.0.0\",\"events\":[\"check\"]}")
  (data (i32.const 64) "{\"decision\":\"allow\",\"code\":\"configured\"}")
  (func (export "toolwarden_abi_v1"))
  (func (export "toolwarden_handle") (param $event i32) (param $len i32) (result i32)
    (local $i i32)
    (if (i32.eqz (global.get $configured))
      (then
        ;; about 300 M loop iterations: far past a 20 ms event deadline
        (local.set $i (i32.const 300000000))
        (loop $spin
          (local.set $i (i32.sub (local.get $i) (i32.const 1)))
          (br_if $spin (local.get $i)))
        (global.set $configured (i32.const 1))))
    (if (i32.eqz (local.get $event))
      (then (drop (call $output_write (i32.const 0) (i32.const 58))))
      (else (drop (call $output_write (i32.const 64) (i32.const 40)))))
    (i32.const 0)))
