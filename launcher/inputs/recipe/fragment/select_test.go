package fragment

import (
	"errors"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/variants"
)

// TestSelect: a single-node bundle whose zip groups each pair a CONC list
// with a parallelism, the same concurrency in more than one group, is
// served by the one variant whose CONC and GPUs, TP, EP and DP attention
// are the point's (single_node.py select_recipe, as Select's comment
// cites); a point no variant serves, or two serve, is a SelectError.
func TestSelect(t *testing.T) {
	const trtllm = `base:
  engine: {type: trtllm}
  roles:
    agg:
      gpus: 4
      args:
        tensor_parallel_size: 4
        moe_expert_parallel_size: 1
        max_batch_size: 1
zip_override_narrow:
  roles:
    agg:
      args:
        max_batch_size: [2, 6]
  benchmark:
    env:
      CONC: ['2', '6']
zip_override_wide:
  roles:
    agg:
      gpus: 8
      args:
        tensor_parallel_size: 8
        moe_expert_parallel_size: 8
        enable_attention_dp: [false, true]
        max_batch_size: [6, 40]
  benchmark:
    env:
      CONC: ['6', '40']
`
	const sglang = `base:
  engine: sglang
  roles:
    agg:
      gpus: 2
      args:
        tensor-parallel-size: 2
override_twice_a:
  benchmark: {env: {CONC: '3'}}
override_twice_b:
  benchmark: {env: {CONC: '3'}}
`
	point := func(conc, tp, ep int, dpa bool) Input {
		return Input{
			Lane: Lane{},
			Point: Point{Model: "org/M", Image: "img:1", Precision: "fp4", ISL: 100, OSL: 10, Conc: []int{conc},
				RandomRangeRatio: "0.5", GPUCount: tp, TP: tp, EP: ep, DPAttention: dpa},
		}
	}
	for _, c := range []struct {
		name, doc, selector string
		in                  Input
		want                string // the chosen variant's selector; "" for a refusal
		wantMsg             string // part of the refusal
		batch               string // the chosen variant's max_batch_size
	}{
		{"CONC picks the zip item", trtllm, "", point(2, 4, 1, false), "zip_override_narrow[0]", "", "2"},
		{"a shared CONC: the narrow parallelism", trtllm, "", point(6, 4, 1, false), "zip_override_narrow[1]", "", "6"},
		{"a shared CONC: the wide parallelism", trtllm, "", point(6, 8, 8, false), "zip_override_wide[0]", "", "6"},
		{"DP attention is part of the pairing", trtllm, "", point(40, 8, 8, true), "zip_override_wide[1]", "", "40"},
		{"the selector narrows the choice", trtllm, "zip_override_wide", point(6, 8, 8, false), "zip_override_wide[0]", "", "6"},
		{"a CONC no group names", trtllm, "", point(7, 4, 1, false), "", "serves the point", ""},
		{"the CONC with the wrong DP attention", trtllm, "", point(40, 8, 8, false), "", "serves the point", ""},
		{"the selector rules out the only server", trtllm, "zip_override_wide", point(2, 4, 1, false), "", "serves the point", ""},
		{"two variants serve one point", sglang, "", point(3, 2, 1, false), "", "2 variants serve the point", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, err := Select("f.yaml", parse(t, c.doc), c.selector, c.in)
			if c.want == "" {
				var se *variants.SelectError
				if !errors.As(err, &se) || !strings.Contains(se.Msg, c.wantMsg) {
					t.Fatalf("Select = %v, %v; want a SelectError saying %q", v, err, c.wantMsg)
				}
				return
			}
			if err != nil {
				t.Fatalf("Select: %v", err)
			}
			if v.Selector != c.want {
				t.Errorf("Select chose %s, want %s", v.Selector, c.want)
			}
			got := dump(t, v.Doc)
			if !strings.Contains(got, "max_batch_size: "+c.batch+"\n") {
				t.Errorf("chosen variant does not carry max_batch_size %s:\n%s", c.batch, got)
			}
		})
	}
}
