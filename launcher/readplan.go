package launcher

import (
	"encoding/json"
	"fmt"
	"os"
)

// ReadPlan reads and validates a plan file: what the driver, the in-job
// steps and attach all start from.
func ReadPlan(path string) (*Plan, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading plan: %w", err)
	}
	var plan Plan
	if err := json.Unmarshal(data, &plan); err != nil {
		return nil, fmt.Errorf("decoding plan %s: %w", path, err)
	}
	if err := plan.Validate(); err != nil {
		return nil, fmt.Errorf("plan %s: %w", path, err)
	}
	return &plan, nil
}
