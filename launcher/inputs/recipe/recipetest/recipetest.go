// Package recipetest holds the recipes the tests of the recipe reader and
// of the migration share (and seed their fuzzers with). Tests only.
package recipetest

// Base is a small valid schema-1 disaggregated recipe; tests edit it.
const Base = `name: test-1p1d
model:
  path: dsr1
  container: lmsysorg/sglang:v0.5.12
  precision: fp4
resources:
  gpu_type: b200
  gpus_per_node: 8
  prefill_nodes: 1
  prefill_workers: 1
  decode_nodes: 1
  decode_workers: 1
backend:
  type: sglang
benchmark:
  type: sa-bench
  isl: 1024
  osl: 1024
  concurrencies: "16x32"
`

// OverrideFile is an srtctl override file: a base, an override section
// and a zip section of two configs.
const OverrideFile = `base:
  name: ov
  model: {path: dsr1, container: lmsysorg/sglang:v0.5.12}
  resources: {gpus_per_node: 8, prefill_nodes: 1, prefill_workers: 1, decode_nodes: 1, decode_workers: 1}
  backend:
    type: sglang
    sglang_config:
      decode: {mem-fraction-static: 0.8, load-balance-method: round_robin}
  benchmark: {type: sa-bench, isl: 1024, osl: 1024, concurrencies: [4]}
override_big:
  backend:
    sglang_config:
      decode: {mem-fraction-static: 0.9, load-balance-method: null}
zip_override_sweep:
  name: [a, b]
  resources: {decode_nodes: [1, 2], decode_workers: [1]}
  benchmark: {concurrencies: [[8], [16, 32]]}
  backend:
    sglang_config:
      decode: {load-balance-method: null}
`
