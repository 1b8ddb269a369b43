;; A plugin that counts how many times a session's calls enter it: each check adds 1 to the
;; session counter "checks", each observe 1 to "observes" (session state, pdk/ABI.md section 12).
;; The host holds the counters, so they count guest entries whatever instance ran them. It needs
;; nothing of the input (section 14). Build: wat2wasm counter.wat -o counter.wasm
(module
  (import "toolwarden" "output_write" (func $output_write (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"name\":\"counter\",\"version\":\"1.0.0\",\"events\":[\"check\",\"observe\"],\"state\":true,\"needs\":[]}")
  (data (i32.const 256) "{\"decision\":\"abstain\",\"state\":{\"add\":{\"checks\":1}}}")
  (data (i32.const 512) "{\"state\":{\"add\":{\"observes\":1}}}")
  (func (export "toolwarden_abi_v1"))
  (func (export "toolwarden_handle") (param $event i32) (param $len i32) (result i32)
    (if (i32.eq (local.get $event) (i32.const 0))
      (then (drop (call $output_write (i32.const 0) (i32.const 89))) (return (i32.const 0))))
    (if (i32.eq (local.get $event) (i32.const 2))
      (then (drop (call $output_write (i32.const 256) (i32.const 51))) (return (i32.const 0))))
    (if (i32.eq (local.get $event) (i32.const 3))
      (then (drop (call $output_write (i32.const 512) (i32.const 32))) (return (i32.const 0))))
    (i32.const 1)))
