"""The Content-Security-Policy of a site whose pages embed drawings (the UI, the catalog).

Only the site's own scripts, styles and images: no inline script, no eval, no other origin,
and no framing by any page. The one inline style allowed, by its hash, is the one every
drawing embeds.
"""

from __future__ import annotations

import base64
import hashlib

from etl_craft.drawing.svg import STYLE

DRAWING_STYLE = base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; "
    f"style-src 'self' 'sha256-{DRAWING_STYLE}'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; object-src 'none'; "
    "frame-ancestors 'none'"
)
