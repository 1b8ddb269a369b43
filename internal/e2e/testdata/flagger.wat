;; A plugin for the adversarial prompt tests (sdk/e2e/adversarial_prompt_test.go):
;; it asks about every call, lets the approval be remembered, and flags the
;; "path" and "content" arguments (pdk/ABI.md 5.2). Build:
;;   wat2wasm flagger.wat -o flagger.wasm
(module
  (import "toolwarden" "output_write" (func $output_write (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"name\":\"flagger\",\"version\":\"1.0.0\",\"events\":[\"check\"]}")
  (data (i32.const 256) "{\"decision\":\"ask\",\"code\":\"flagged\",\"reason\":\"this call writes a file\",\"remember\":true,\"arguments\":[\"path\",\"content\"]}")
  (func (export "toolwarden_abi_v1"))
  (func (export "toolwarden_handle") (param $event i32) (param $len i32) (result i32)
    (if (i32.eqz (local.get $event))
      (then (drop (call $output_write (i32.const 0) (i32.const 55)))))
    (if (i32.eq (local.get $event) (i32.const 2))
      (then (drop (call $output_write (i32.const 256) (i32.const 117)))))
    (i32.const 0)))
