package recipe

import "github.com/slurmbench/slurmbench/launcher/inputs/recipe/values"

// The recipe's leaf values are package values's; these are the names the
// recipe model and its readers use for them.
type (
	Value         = values.Value
	Scalar        = values.Scalar
	EnvMap        = values.EnvMap
	Concurrencies = values.Concurrencies
	Raw           = values.Raw
)

// Flags renders an engine config to CLI flags by srtctl's rule (values.Flags).
func Flags(cfg map[string]Value) []string { return values.Flags(cfg) }

// CheckConcurrencies is values.CheckConcurrencies: each positive, none twice.
func CheckConcurrencies(concs []int) error { return values.CheckConcurrencies(concs) }

// ParseConcurrencies is values.ParseConcurrencies: "16x32x64", "16 32 64", "16,32" or "16".
func ParseConcurrencies(s string) ([]int, error) { return values.ParseConcurrencies(s) }
