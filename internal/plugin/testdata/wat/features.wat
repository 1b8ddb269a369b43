;; A module that uses every kind of instruction immediate the instrumenter
;; decodes (host/plugin/instrument_test.go): it checks that instrumented
;; code computes what the original does, and traps when the stop flag is set.
;; Built with
;;   wat2wasm features.wat -o features.wasm
(module
  (type $ii_i (func (param i32 i32) (result i32)))
  (type $i_ii (func (param i32) (result i32 i32)))
  (memory (export "memory") 1)
  (table $funcs 4 funcref)
  (table $refs 2 10 externref)
  (global $g (mut i32) (i32.const 7))
  (global $k i64 (i64.const -1))
  (elem (i32.const 0) $leaf $sum)
  (elem $passive func $leaf)
  (data (i32.const 16) "hello, world")
  (data $bytes "passive!")
  (start $init)

  (func $init (global.set $g (i32.const 42)))
  (func (export "g") (result i32) (global.get $g))

  ;; No loop, no call: no check at all.
  (func $leaf (export "leaf") (param i32) (result i32)
    (i32.mul (local.get 0) (i32.const 3)))

  ;; A loop.
  (func $sum (export "sum") (param $n i32) (result i32)
    (local $acc i32)
    (block $done
      (loop $l
        (br_if $done (i32.eqz (local.get $n)))
        (local.set $acc (i32.add (local.get $acc) (local.get $n)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $l)))
    (local.get $acc))

  ;; Recursion without a loop.
  (func $fib (export "fib") (param $n i32) (result i32)
    (if (result i32) (i32.lt_u (local.get $n) (i32.const 2))
      (then (local.get $n))
      (else (i32.add
        (call $fib (i32.sub (local.get $n) (i32.const 1)))
        (call $fib (i32.sub (local.get $n) (i32.const 2)))))))

  ;; call_indirect through table 0 ($leaf at 0, $sum at 1).
  (func (export "indirect") (param $i i32) (param $x i32) (result i32)
    (call_indirect $funcs (param i32) (result i32) (local.get $x) (local.get $i)))

  ;; Bulk memory.
  (func (export "fill") (param $n i32) (result i32)
    (memory.fill (i32.const 100) (i32.const 0x61) (local.get $n))
    (memory.copy (i32.const 1000) (i32.const 100) (local.get $n))
    (i32.add (i32.load8_u (i32.const 1000)) (i32.load8_u (i32.const 17))))

  ;; Passive segments: memory.init, data.drop, table.init, elem.drop.
  (func (export "passive") (result i32)
    (memory.init $bytes (i32.const 200) (i32.const 0) (i32.const 8))
    (data.drop $bytes)
    (table.init $funcs $passive (i32.const 2) (i32.const 0) (i32.const 1))
    (elem.drop $passive)
    (i32.add (i32.load8_u (i32.const 207))
      (call_indirect $funcs (param i32) (result i32) (i32.const 5) (i32.const 2))))

  ;; Reference types and table operations; typed select.
  (func (export "tables") (param $x i32) (result i32)
    (drop (table.grow $refs (ref.null extern) (i32.const 1)))
    (table.set $refs (i32.const 0) (table.get $refs (i32.const 1)))
    (table.fill $refs (i32.const 0) (ref.null extern) (i32.const 2))
    (table.copy $refs $refs (i32.const 0) (i32.const 1) (i32.const 1))
    (i32.add (table.size $refs)
      (i32.add (table.size $funcs)
        (select (result i32) (local.get $x) (i32.const 2) (ref.is_null (ref.func $leaf))))))

  ;; Multi-value: a block and a loop typed by type index, loop params.
  (func (export "multi") (param $n i32) (result i32)
    (local $a i32)
    (local.get $n)
    (block (type $i_ii) (i32.const 5))
    (i32.add)
    (global.set $g)
    (i32.const 0) (local.get $n)
    (loop $l (type $ii_i)
      (local.set $n) (local.set $a)
      (if (result i32) (i32.eqz (local.get $n))
        (then (local.get $a))
        (else
          (i32.add (local.get $a) (local.get $n))
          (i32.sub (local.get $n) (i32.const 1))
          (br $l)))))

  ;; br_table, saturating truncation, sign extension, constants.
  (func (export "misc") (param $x i32) (result i32)
    (local $f f64)
    (local.set $f (f64.const -1.5e300))
    (block $c (block $b (block $a
      (br_table $a $b $c (local.get $x)))
      (return (i32.trunc_sat_f64_s (local.get $f))))
      (return (i32.extend8_s (i32.const 0x80))))
    (i32.add (i32.wrap_i64 (i64.extend16_s (i64.const 0x8001)))
      (i32.trunc_sat_f32_u (f32.const 3.9))))

  ;; SIMD: v128.const, shuffle, lanes, load lane, opcodes above 127, a
  ;; loop after all of them.
  (func (export "simd") (param $x i32) (result i32)
    (local $v v128)
    (local.set $v (v128.const i32x4 1 -2 3 -4))
    (local.set $v (i8x16.shuffle 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 (local.get $v) (local.get $v)))
    (local.set $v (i32x4.replace_lane 1 (local.get $v) (local.get $x)))
    (v128.store offset=64 (i32.const 0) (local.get $v))
    (local.set $v (v128.load32_lane 2 (i32.const 64) (local.get $v)))
    (local.set $v (i16x8.abs (local.get $v)))
    (local.set $v (i32x4.dot_i16x8_s (local.get $v) (local.get $v)))
    (local.set $v (v128.load64_zero (i32.const 64)))
    (block $b
      (loop $l
        (br_if $b (i32.eqz (local.get $x)))
        (local.set $x (i32.sub (local.get $x) (i32.const 1)))
        (local.set $v (i32x4.add (local.get $v) (v128.const i32x4 1 1 1 1)))
        (br $l)))
    (i32.add (i32x4.extract_lane 0 (local.get $v)) (i8x16.extract_lane_u 3 (local.get $v))))

  ;; Never returns.
  (func (export "spin") (loop $l (br $l)))
)
