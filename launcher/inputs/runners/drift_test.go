package runners

import (
	"errors"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
)

// TestNewestRecordRules: the fields and rules of the newest stored
// records (infx/clusters/slurm.py@19c96be5, the fabric of
// configs/runners.yaml@2c4d2b9f and InferenceX's cluster record tests),
// each on an edit of the built fixture: what they accept reads (and what
// it reads to), what they refuse is refused at its field, and an unknown
// sibling of a new field is still refused.
func TestNewestRecordRules(t *testing.T) {
	srt := func(inv *Inventory) *SrtSlurm { return inv.Clusters["alpha"].Slurm.SrtSlurm }
	for _, tt := range []struct {
		name, old, new string
		// accepted: check returns what was read and what it must be.
		check func(*Inventory) (got, want any)
		// refused: the field and message.
		field, msg string
	}{
		{name: "power-exporter-port past 65535 (gt=0, no upper bound)", old: "power-exporter-port: 9555", new: "power-exporter-port: 70000",
			check: func(inv *Inventory) (any, any) { return srt(inv).PowerExporterPort, 70000 }},
		{name: "power-exporter-port null is unset", old: "power-exporter-port: 9555", new: "power-exporter-port: null",
			check: func(inv *Inventory) (any, any) { return srt(inv).PowerExporterPort, 0 }},
		{name: "power-exporter-port by its Python name", old: "power-exporter-port: 9555", new: "power_exporter_port: 9401",
			check: func(inv *Inventory) (any, any) { return srt(inv).PowerExporterPort, 9401 }},
		{name: "power-exporter-port zero", old: "power-exporter-port: 9555", new: "power-exporter-port: 0",
			field: "clusters.alpha.slurm.srt-slurm.power-exporter-port", msg: "greater than 0"},
		{name: "power-exporter-port negative", old: "power-exporter-port: 9555", new: "power-exporter-port: -9401",
			field: "clusters.alpha.slurm.srt-slurm.power-exporter-port", msg: "greater than 0"},
		{name: "power-exporter-port a word", old: "power-exporter-port: 9555", new: "power-exporter-port: dcgm",
			field: "clusters.alpha.slurm.srt-slurm.power-exporter-port", msg: "must be an integer"},
		{name: "power-exporter-port a list", old: "power-exporter-port: 9555", new: "power-exporter-port: [9401]",
			field: "clusters.alpha.slurm.srt-slurm.power-exporter-port", msg: "must be an integer"},
		{name: "power-exporter-port misspelt sibling", old: "power-exporter-port: 9555", new: "power-exporter-port: 9555\n        power-exporter-prt: 9401",
			field: "clusters.alpha.slurm.srt-slurm.power-exporter-prt", msg: "unknown key"},
		{name: "fabric rdma-devices (runners.yaml@2c4d2b9f)", old: "ib-devices: [rdma0, rdma1]", new: "ib-devices: [rdma0, rdma1]\n          rdma-devices: [mlx5_0, mlx5_1]",
			check: func(inv *Inventory) (any, any) {
				v, _ := srt(inv).Fabric.Value("rdma-devices")
				return v, "mlx5_0,mlx5_1"
			}},
		{name: "fabric device with a port", old: "ucx-net-devices: [mlx5_0:1]", new: "ucx-net-devices: [mlx5_0:1]\n          nccl-ib-hca: [mlx5_0:1, mlx5_3:1]",
			check: func(inv *Inventory) (any, any) {
				v, _ := srt(inv).Fabric.Value("nccl-ib-hca")
				return v, "mlx5_0:1,mlx5_3:1"
			}},
		{name: "fabric list spanning lines", old: "ib-devices: [rdma0, rdma1]", new: "ib-devices: [rdma0,\n                       rdma1]",
			check: func(inv *Inventory) (any, any) { v, _ := srt(inv).Fabric.Value("ib-devices"); return v, "rdma0,rdma1" }},
		{name: "fabric item holding a comma", old: "ib-devices: [rdma0, rdma1]", new: `ib-devices: ["rdma0,rdma1"]`,
			field: "clusters.alpha.slurm.srt-slurm.fabric.ib-devices[0]", msg: "holds a ','"},
		{name: "fabric second item holding a comma", old: "ucx-net-devices: [mlx5_0:1]", new: `ucx-net-devices: [mlx5_0:1, "mlx5_1:1,mlx5_2:1"]`,
			field: "clusters.alpha.slurm.srt-slurm.fabric.ucx-net-devices[1]", msg: "holds a ','"},
		{name: "fabric list written as one string", old: "ib-devices: [rdma0, rdma1]", new: `ib-devices: "rdma0,rdma1"`,
			field: "clusters.alpha.slurm.srt-slurm.fabric.ib-devices", msg: "must be a list"},
		{name: "fabric number a word", old: "mooncake-gid-index: 3", new: "mooncake-gid-index: three",
			field: "clusters.alpha.slurm.srt-slurm.fabric.mooncake-gid-index", msg: "must be an integer"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			inv, err := Parse(fixture, edit(t, tt.old, tt.new), Options{Home: "/home/runner"})
			if tt.check != nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if got, want := tt.check(inv); got != want {
					t.Errorf("read %v, want %v", got, want)
				}
				return
			}
			var ye *yamltree.Error
			if !errors.As(err, &ye) {
				t.Fatalf("got %v, want a located refusal", err)
			}
			if ye.Field != tt.field || !strings.Contains(ye.Msg, tt.msg) || ye.Line == 0 {
				t.Errorf("got %v (line %d)\nwant field %q, message with %q", err, ye.Line, tt.field, tt.msg)
			}
		})
	}
}
