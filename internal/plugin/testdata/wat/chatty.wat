;; A plugin that talks: on check it writes a line to WASI stdout and one to stderr, then calls
;; the log import 40 times (the host keeps 32 per event). Build: wat2wasm chatty.wat -o chatty.wasm
(module
  (import "toolwarden" "output_write" (func $output_write (param i32 i32) (result i32)))
  (import "toolwarden" "log" (func $log (param i32 i32 i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"name\":\"chatty\",\"version\":\"1.0.0\",\"events\":[\"check\"]}")
  (data (i32.const 100) "hello from stdout\n")
  (data (i32.const 130) "trouble on stderr\n")
  (data (i32.const 160) "log line")
  (func (export "toolwarden_abi_v1"))
  (func $write (param $fd i32) (param $ptr i32) (param $len i32)
    (i32.store (i32.const 512) (local.get $ptr))
    (i32.store (i32.const 516) (local.get $len))
    (drop (call $fd_write (local.get $fd) (i32.const 512) (i32.const 1) (i32.const 520))))
  (func (export "toolwarden_handle") (param $event i32) (param $len i32) (result i32)
    (local $i i32)
    (if (i32.eqz (local.get $event))
      (then
        (drop (call $output_write (i32.const 0) (i32.const 54)))
        (return (i32.const 0))))
    (call $write (i32.const 1) (i32.const 100) (i32.const 18))
    (call $write (i32.const 2) (i32.const 130) (i32.const 18))
    (loop $l
      (call $log (i32.const 1) (i32.const 160) (i32.const 8))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const 40))))
    (i32.const 0)))
