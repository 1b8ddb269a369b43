;; Hostile plugin "badsig": exports toolwarden_handle with the wrong signature: refused at load.
;; Part of the hostile-plugin corpus (internal/plugin/hostile_test.go). Built with
;;   wat2wasm badsig.wat -o badsig.wasm
(module
  (memory (export "memory") 1)
  (func (export "toolwarden_abi_v1"))
  (func (export "toolwarden_handle") (param i64) (result i64) (local.get 0)))
