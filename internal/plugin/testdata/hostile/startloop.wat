;; Hostile plugin "startloop": its start section (run at instantiation,
;; before any event) spins forever: loading must fail with a timeout.
;; Part of the hostile-plugin corpus (internal/plugin/deadline_strategy_test.go).
;; Built with
;;   wat2wasm startloop.wat -o startloop.wasm
(module
  (import "toolwarden" "output_write" (func $output_write (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"name\":\"hostile-startloop\",\"version\":\"1.0.0\",\"events\":[\"check\"]}")
  (func $spin (loop $forever (br $forever)))
  (start $spin)
  (func (export "toolwarden_abi_v1"))
  (func (export "toolwarden_handle") (param $ev i32) (param $len i32) (result i32)
    (drop (call $output_write (i32.const 0) (i32.const 65)))
    (i32.const 0)))
