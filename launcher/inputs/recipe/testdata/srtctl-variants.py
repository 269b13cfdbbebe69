# Regenerates srtctl-variants.json: every config srtctl c88ef731 expands the
# corpus's override files (base: + override_*/zip_override_*) into, as its
# apply/dry-run path builds them (core/config.py resolve_override_yaml, dumped
# and re-read as cli/submit.py submit_override does). Needs srtctl's source
# and its Python dependencies (PyYAML, ruamel.yaml); run from the repository:
#   python3 launcher/recipe/testdata/srtctl-variants.py SRTCTL_SRC CORPUS_DIR > launcher/recipe/testdata/srtctl-variants.json
import glob, json, os, sys, logging
logging.disable(logging.CRITICAL)
sys.path.insert(0, sys.argv[1])
import yaml
from pathlib import Path
from srtctl.core.config import resolve_override_yaml
from srtctl.core.yaml_utils import dump_yaml_with_comments
root = sys.argv[2]
out = {}
for f in sorted(glob.glob(root + '/**/*.yaml', recursive=True)):
    raw = yaml.safe_load(open(f))
    if not isinstance(raw, dict) or 'base' not in raw:
        continue
    sels = sorted(k for k in raw if k.startswith('override_'))
    for z in sorted(k for k in raw if k.startswith('zip_override_')):
        sels += [f'{z}[{i}]' for i, _ in enumerate(resolve_override_yaml(Path(f), z))]
    rel = os.path.relpath(f, root)
    out[rel] = {}
    for s in sels:
        [(_, cm)] = resolve_override_yaml(Path(f), s)
        out[rel][s] = yaml.safe_load(dump_yaml_with_comments(cm))
json.dump(out, sys.stdout, indent=1, sort_keys=True)
print()
