// Package enroot names, imports and starts container images with NVIDIA
// enroot, and renders the matching pyxis flags.
//
// Three jobs, each in its own file:
//
//   - ref.go: one image reference type for the docker, registry, pyxis and
//     pinned forms used in InferenceX configs (plus absolute .sqsh paths),
//     rendered as the enroot URI, the pyxis --container-image value and the
//     squash file name the InferenceX runners already use for their caches.
//   - import.go: a locked, validated, atomic `enroot import` into a shared
//     squash directory; a reader never sees a half-written file.
//   - argv.go: `enroot start` argv and pyxis srun flags, always as argv slices,
//     with environment values kept out of argv.
package enroot
