// Package oci imports registry images as OCI bundles and renders the srun
// flags of Slurm's own container support (srun --container=BUNDLE, with the
// site's oci.conf choosing crun or runc): the runtime "oci" of a profile,
// for sites without pyxis.
//
// The recipe is the one Slurm's Containers Guide gives for making a bundle
// (slurm.schedmd.com/containers.html#bundle, SchedMD/slurm
// doc/html/containers.shtml@01cec7fa): `skopeo copy docker://IMAGE
// oci:DIR:TAG`, then `umoci unpack --rootless --image DIR:TAG BUNDLE`.
// Slurm does not move bundles to the nodes, so the bundle lives in the
// shared image directory (paths.squash_dir), and each step gets a bundle
// of its own whose config.json points at the image's root filesystem and
// adds the step's mounts (Slurm's srun has no mount flags: mounts are the
// bundle's).
//
// Each job in its own file:
//
//   - bundle.go: where an image's bundle lives, whether it is whole, and
//     the per-step config.json.
//   - import.go: a locked, checked, atomic import by digest: a reader never
//     sees a half-unpacked bundle.
package oci
