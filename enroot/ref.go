package enroot

import (
	"encoding"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

// Ref is one container image: either a registry image (Registry, Repository,
// Tag, Digest) or an already-imported squash file (Path).
//
// The forms accepted by ParseRef are the ones InferenceX configs use:
//
//	lmsysorg/sglang:v0.5.19-cu130                  docker form (Docker Hub)
//	nvcr.io/nvidia/tensorrt-llm/release:1.3.0rc18  registry form
//	nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc18  pyxis/enroot form
//	lmsysorg/sglang:v0.5.14-cu130@sha256:<64 hex>  pinned form
//	/shared/squash/dynamo-sglang.sqsh              local squash file
type Ref struct {
	// Registry is the registry host[:port]; empty means Docker Hub (the
	// docker.io aliases are normalised to empty).
	Registry string
	// Repository is the image path inside the registry, e.g. "nvidia/x".
	Repository string
	// Tag is empty when the reference has none (enroot then uses "latest").
	Tag string
	// Digest is "sha256:" and 64 lowercase hex digits, or empty.
	Digest string
	// Path is the absolute .sqsh path of a local image; the other fields are
	// empty then.
	Path string

	// raw is the text the user wrote. The runners name squash files after it,
	// so it is kept for SquashName and for messages.
	raw string
}

// RefError reports an image reference that cannot be used, and why.
type RefError struct {
	Input  string
	Reason string
}

func (e *RefError) Error() string {
	return fmt.Sprintf("invalid image reference %q: %s", e.Input, e.Reason)
}

var (
	// A path component as in the distribution reference grammar.
	repoComponent = regexp.MustCompile(`^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$`)
	tagPattern    = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
	digestPattern = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	hostLabel     = `[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?`
	registryHost  = regexp.MustCompile(`^` + hostLabel + `(?:\.` + hostLabel + `)*(?::[0-9]+)?$`)
)

// dockerHubAliases are the registry names that mean Docker Hub. enroot
// resolves a registry-less URI to registry-1.docker.io itself, and its older
// parser cannot take docker.io as a registry, so they render without one.
var dockerHubAliases = map[string]bool{
	"docker.io":            true,
	"index.docker.io":      true,
	"registry-1.docker.io": true,
}

// ParseRef parses an image reference in any of the forms listed on Ref.
// Errors are *RefError and name the problem.
func ParseRef(s string) (Ref, error) {
	bad := func(format string, args ...any) (Ref, error) {
		return Ref{}, &RefError{Input: s, Reason: fmt.Sprintf(format, args...)}
	}
	if s == "" {
		return bad("empty")
	}
	if i := strings.IndexFunc(s, unicode.IsSpace); i >= 0 {
		return bad("contains whitespace at byte %d", i)
	}
	if i := strings.Index(s, "://"); i >= 0 {
		return bad("must not contain a URL scheme (%s://); give the image itself, e.g. %q", s[:i], s[i+3:])
	}
	if strings.HasSuffix(s, ".sqsh") || strings.HasPrefix(s, "/") || strings.HasPrefix(s, ".") {
		if !filepath.IsAbs(s) {
			return bad("a local squash file must be given by its absolute path")
		}
		if !strings.HasSuffix(s, ".sqsh") {
			return bad("a local image must be a .sqsh file")
		}
		return Ref{Path: filepath.Clean(s), raw: s}, nil
	}

	ref := Ref{raw: s}
	rest := s
	if i := strings.IndexByte(rest, '@'); i >= 0 {
		rest, ref.Digest = rest[:i], rest[i+1:]
		switch {
		case strings.ContainsAny(ref.Digest, "#/"):
			return bad("credentials (USER@) do not belong in an image reference; put them in $ENROOT_CONFIG_PATH/.credentials")
		case strings.Contains(ref.Digest, "@"):
			return bad("more than one '@'")
		case !digestPattern.MatchString(ref.Digest):
			return bad("bad digest %q: want sha256: followed by 64 lowercase hex digits", ref.Digest)
		}
	}

	switch n := strings.Count(rest, "#"); {
	case n > 1:
		return bad("more than one '#' (the pyxis form is REGISTRY#REPOSITORY[:TAG])")
	case n == 1:
		i := strings.IndexByte(rest, '#')
		ref.Registry, rest = rest[:i], rest[i+1:]
		if ref.Registry == "" {
			return bad("empty registry before '#'")
		}
	default:
		// Docker's rule: the first component is a registry only if it looks
		// like a host (has a dot or a port, or is localhost).
		if i := strings.IndexByte(rest, '/'); i > 0 {
			if first := rest[:i]; strings.ContainsAny(first, ".:") || first == "localhost" {
				ref.Registry, rest = first, rest[i+1:]
			}
		}
	}
	if ref.Registry != "" && !registryHost.MatchString(ref.Registry) {
		return bad("bad registry %q: want HOST[:PORT]", ref.Registry)
	}
	if dockerHubAliases[strings.ToLower(ref.Registry)] {
		ref.Registry = ""
	}

	if i := strings.LastIndexByte(rest, ':'); i >= 0 {
		rest, ref.Tag = rest[:i], rest[i+1:]
		if !tagPattern.MatchString(ref.Tag) {
			return bad("bad tag %q: want letters, digits, '_', '.' or '-' (at most 128, not starting with '.' or '-')", ref.Tag)
		}
	}

	if rest == "" {
		return bad("empty repository")
	}
	if len(rest) > 255 {
		return bad("repository longer than 255 characters")
	}
	for _, c := range strings.Split(rest, "/") {
		if repoComponent.MatchString(c) {
			continue
		}
		if strings.ToLower(c) != c && repoComponent.MatchString(strings.ToLower(c)) {
			return bad("repository %q must be lowercase", rest)
		}
		return bad("bad repository %q: component %q must be lowercase letters and digits separated by '.', '_', '__' or '-'", rest, c)
	}
	ref.Repository = rest
	return ref, nil
}

// IsLocal reports whether the reference is an already-imported .sqsh file.
func (r Ref) IsLocal() bool { return r.Path != "" }

// String returns the reference as the user wrote it (for messages).
func (r Ref) String() string {
	if r.raw != "" {
		return r.raw
	}
	return r.Name()
}

// Name returns the normalised docker form, [REGISTRY/]REPOSITORY[:TAG][@DIGEST]
// (Docker Hub without a registry), or the path of a local image. Two
// references name the same image when their Names are equal.
func (r Ref) Name() string {
	if r.IsLocal() {
		return r.Path
	}
	var b strings.Builder
	if r.Registry != "" {
		b.WriteString(r.Registry + "/")
	}
	b.WriteString(r.Repository)
	if r.Tag != "" {
		b.WriteString(":" + r.Tag)
	}
	if r.Digest != "" {
		b.WriteString("@" + r.Digest)
	}
	return b.String()
}

// EnrootURI returns the URI for `enroot import`: docker://[REGISTRY#]IMAGE[:TAG].
// It is empty for a local image, which needs no import.
//
// A digest is rendered as the tag, docker://[REGISTRY#]IMAGE:sha256:<hex>,
// and a tag next to it is dropped. enroot up to 3.5 parses the URI with
// `^docker://((USER)@)?((REGISTRY)#)?(IMAGE)(:(TAG))?$` where TAG is
// [[:alnum:]._:-]+: an '@' is read as the USER separator (USER's class
// includes '/' and ':', so "repo:tag@sha256:..." would become user "repo:tag"),
// while ":sha256:<hex>" is a valid TAG that enroot puts into
// /v2/IMAGE/manifests/sha256:<hex>, which the registry API resolves by digest
// (the per-architecture manifest-list selection still applies). Newer enroot
// also accepts IMAGE:TAG@DIGEST but ignores the tag there too, and still
// parses the ":sha256:" form. InferenceX's gb200 runner uses the same form.
func (r Ref) EnrootURI() string {
	if r.IsLocal() {
		return ""
	}
	var b strings.Builder
	b.WriteString("docker://")
	if r.Registry != "" {
		b.WriteString(r.Registry + "#")
	}
	b.WriteString(r.Repository)
	switch {
	case r.Digest != "":
		b.WriteString(":" + r.Digest)
	case r.Tag != "":
		b.WriteString(":" + r.Tag)
	}
	return b.String()
}

// PyxisImage returns the value for srun --container-image: the squash path of
// a local image, otherwise the enroot URI without "docker://" (pyxis adds
// that prefix itself before calling enroot import).
func (r Ref) PyxisImage() string {
	if r.IsLocal() {
		return r.Path
	}
	return strings.TrimPrefix(r.EnrootURI(), "docker://")
}

// SquashName returns the squash file name the InferenceX runners use for this
// image, so their existing caches are reused: the reference as written with
// each of / : @ # replaced by '_', plus ".sqsh" (their
// `echo "$IMAGE" | sed 's/[\/:@#]/_/g'`). Nothing else is normalised, exactly
// as there: "docker.io/x/y:t" and "x/y:t" are different files, while the
// registry and pyxis forms of one image share a file. A local image's name is
// its base name.
func (r Ref) SquashName() string {
	if r.IsLocal() {
		return filepath.Base(r.Path)
	}
	return strings.Map(func(c rune) rune {
		switch c {
		case '/', ':', '@', '#':
			return '_'
		}
		return c
	}, r.String()) + ".sqsh"
}

var (
	_ encoding.TextMarshaler   = Ref{}
	_ encoding.TextUnmarshaler = (*Ref)(nil)
)

// MarshalText returns the reference as written, so a Ref round-trips through
// TOML, YAML and JSON.
func (r Ref) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText parses text with ParseRef.
func (r *Ref) UnmarshalText(text []byte) error {
	parsed, err := ParseRef(string(text))
	if err != nil {
		return err
	}
	*r = parsed
	return nil
}
