package gsm8k

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
)

// MetaEnv is the meta_env.json InferenceX writes beside lm-eval's results
// (benchmark_lib.sh _write_lm_eval_meta_json). The
// collector and validate_scores.py read it: infmax_model_prefix picks the
// threshold, conc and the eval_concs lists check batched runs. Field order
// and types follow the shell heredoc; isl and osl are strings there.
type MetaEnv struct {
	IsMultinode       bool   `json:"is_multinode"`
	Framework         string `json:"framework"`
	Precision         string `json:"precision"`
	SpecDecoding      string `json:"spec_decoding"`
	RecipeFingerprint string `json:"recipe_fingerprint"`
	TP                int    `json:"tp"`
	PP                int    `json:"pp"`
	DCPSize           int    `json:"dcp_size"`
	PCPSize           int    `json:"pcp_size"`
	Conc              int    `json:"conc"`

	// Set only for batched evals (one lm-eval run per concurrency).
	EvalConcs          *[]int `json:"eval_concs,omitempty"`
	CompletedEvalConcs *[]int `json:"completed_eval_concs,omitempty"`
	FailedEvalConcs    *[]int `json:"failed_eval_concs,omitempty"`

	EP          int  `json:"ep"`
	DPAttention bool `json:"dp_attention"`

	PrefillTP          int  `json:"prefill_tp"`
	PrefillPP          int  `json:"prefill_pp"`
	PrefillDCPSize     int  `json:"prefill_dcp_size"`
	PrefillPCPSize     int  `json:"prefill_pcp_size"`
	PrefillEP          int  `json:"prefill_ep"`
	PrefillDPAttention bool `json:"prefill_dp_attention"`
	PrefillNumWorkers  int  `json:"prefill_num_workers"`

	DecodeTP          int  `json:"decode_tp"`
	DecodePP          int  `json:"decode_pp"`
	DecodeDCPSize     int  `json:"decode_dcp_size"`
	DecodePCPSize     int  `json:"decode_pcp_size"`
	DecodeEP          int  `json:"decode_ep"`
	DecodeDPAttention bool `json:"decode_dp_attention"`
	DecodeNumWorkers  int  `json:"decode_num_workers"`

	Model             string `json:"model"`
	InfmaxModelPrefix string `json:"infmax_model_prefix"`
	HW                string `json:"hw"` // RUNNER_TYPE
	ISL               string `json:"isl"`
	OSL               string `json:"osl"`
}

// SetBatch records a batched eval: every requested concurrency, the ones
// that completed and the ones that failed. conc becomes the first requested
// one, as in append_lm_eval_summary.
func (m *MetaEnv) SetBatch(requested, completed, failed []int) {
	cp := func(v []int) *[]int { c := append([]int{}, v...); return &c }
	m.EvalConcs, m.CompletedEvalConcs, m.FailedEvalConcs = cp(requested), cp(completed), cp(failed)
	if len(requested) > 0 {
		m.Conc = requested[0]
	}
}

// withDefaults fills what the shell fills when a variable is unset:
// "unknown" for names, 1 for sizes and worker counts, "0" for isl/osl.
func (m MetaEnv) withDefaults() MetaEnv {
	str := func(p *string, d string) {
		if *p == "" {
			*p = d
		}
	}
	one := func(ps ...*int) {
		for _, p := range ps {
			if *p == 0 {
				*p = 1
			}
		}
	}
	str(&m.Framework, "unknown")
	str(&m.Precision, "unknown")
	str(&m.InfmaxModelPrefix, "unknown")
	str(&m.HW, "unknown")
	str(&m.ISL, "0")
	str(&m.OSL, "0")
	one(&m.TP, &m.PP, &m.DCPSize, &m.PCPSize, &m.Conc, &m.EP,
		&m.PrefillTP, &m.PrefillPP, &m.PrefillDCPSize, &m.PrefillPCPSize, &m.PrefillEP, &m.PrefillNumWorkers,
		&m.DecodeTP, &m.DecodePP, &m.DecodeDCPSize, &m.DecodePCPSize, &m.DecodeEP, &m.DecodeNumWorkers)
	return m
}

// WriteMetaEnv writes meta_env.json atomically, with the shell's defaults
// for unset fields.
func WriteMetaEnv(path string, m MetaEnv) error {
	data, err := marshalIndent(m.withDefaults())
	if err != nil {
		return fmt.Errorf("encoding meta_env.json: %w", err)
	}
	return atomicfile.WriteFile(path, data, overwrite)
}

// ReadMetaEnv reads a meta_env.json.
func ReadMetaEnv(path string) (MetaEnv, error) {
	var m MetaEnv
	raw, err := os.ReadFile(path)
	if err != nil {
		return m, fmt.Errorf("reading meta_env.json: %w", err)
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return m, fmt.Errorf("decoding %s: %w", path, err)
	}
	return m, nil
}
