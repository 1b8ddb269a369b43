;; The smallest useful plugin: describe, and check with no opinion (empty output).
;; The benchmarks use it to measure the host's cost of one event. Build: wat2wasm noop.wat -o noop.wasm
(module
  (import "toolwarden" "output_write" (func $output_write (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"name\":\"noop\",\"version\":\"1.0.0\",\"events\":[\"check\"]}")
  (func (export "toolwarden_abi_v1"))
  (func (export "toolwarden_handle") (param $event i32) (param $len i32) (result i32)
    (if (i32.eqz (local.get $event))
      (then (drop (call $output_write (i32.const 0) (i32.const 52)))))
    (i32.const 0)))
