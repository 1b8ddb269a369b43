;; Hostile plugin "badlabel": writes JSON that does not fit the ABI (decision "maybe").
;; Part of the hostile-plugin corpus (internal/plugin/hostile_test.go). Built with
;;   wat2wasm badlabel.wat -o badlabel.wasm
;; Behaves well (describe; check answers allow) unless the input contains the bytes "BOOM".
(module
  (import "toolwarden" "input_read" (func $input_read (param i32 i32) (result i32)))
  (import "toolwarden" "output_write" (func $output_write (param i32 i32) (result i32)))
  (memory (export "memory") 2)
  (data (i32.const 0) "{\"name\":\"hostile-badlabel\",\"version\":\"1.0.0\",\"events\":[\"check\"]}")
  (data (i32.const 256) "{\"decision\":\"allow\",\"code\":\"fine\",\"reason\":\"no BOOM in the input\"}")
  (func (export "toolwarden_abi_v1"))
  ;; $boom reads the input to offset 1024 and reports whether it contains "BOOM".
  (func $boom (param $len i32) (result i32)
    (local $i i32) (local $need i32)
    (local.set $need (i32.add (i32.const 1024) (local.get $len)))
    (if (i32.gt_u (local.get $need) (i32.mul (memory.size) (i32.const 65536)))
      (then
        (if (i32.eq (memory.grow (i32.add (i32.div_u (i32.sub (local.get $need) (i32.mul (memory.size) (i32.const 65536))) (i32.const 65536)) (i32.const 1))) (i32.const -1))
          (then (return (i32.const 0))))))
    (drop (call $input_read (i32.const 1024) (local.get $len)))
    (if (i32.lt_u (local.get $len) (i32.const 4)) (then (return (i32.const 0))))
    (block $done
      (loop $scan
        (if (i32.eq (i32.load (i32.add (i32.const 1024) (local.get $i))) (i32.const 0x4d4f4f42))
          (then (return (i32.const 1))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br_if $scan (i32.le_u (i32.add (local.get $i) (i32.const 4)) (local.get $len)))))
    (i32.const 0))
  (data (i32.const 512) "{\"decision\":\"maybe\",\"labels\":[\"not a label!\"]}")
  (func (export "toolwarden_handle") (param $ev i32) (param $len i32) (result i32)
    (if (i32.eqz (local.get $ev))
      (then
        (drop (call $output_write (i32.const 0) (i32.const 64)))
        (return (i32.const 0))))
    (if (call $boom (local.get $len))
      (then (drop (call $output_write (i32.const 512) (i32.const 46))) (return (i32.const 0))))
    (drop (call $output_write (i32.const 256) (i32.const 66)))
    (i32.const 0)))
