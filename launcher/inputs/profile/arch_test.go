package profile

import "testing"

// TestImportPlacement is the one decision run and images import share:
// where an image is imported and for which architecture.
func TestImportPlacement(t *testing.T) {
	host := GoArch()
	other := "aarch64"
	if host == other {
		other = "x86_64"
	}
	for _, tt := range []struct {
		computeArch, importOn string
		onCompute             bool
		arch                  string
	}{
		{"", "", false, ""},
		{host, "", false, ""},
		{other, "", true, ""}, // GB300: import where the image runs
		{other, "login", false, other},
		{other, "compute", true, ""},
		{host, "compute", true, ""},
		{"", "login", false, ""},
	} {
		p := &Profile{Slurm: Slurm{ComputeArch: tt.computeArch}, Container: Container{ImportOn: tt.importOn}}
		if got, arch := p.ImportOnCompute(), p.ImportArch(); got != tt.onCompute || arch != tt.arch {
			t.Errorf("compute_arch %q, import_on %q on %s: on compute %v, --arch %q; want %v, %q", tt.computeArch, tt.importOn, host, got, arch, tt.onCompute, tt.arch)
		}
	}
}
