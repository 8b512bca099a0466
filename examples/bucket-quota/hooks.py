"""bucket-quota: a DecoratorController that writes each opted-in Bucket's quota into its status
and labels it with its tier."""

from __future__ import annotations

from typing import Any

from hooklib import run  # hooklib.py beside this file

LARGE_GI = 100


def sync(request: dict[str, Any]) -> dict[str, Any]:
    bucket = request["object"]
    size = int(bucket.get("spec", {}).get("sizeGi", 0))
    tier = "large" if size >= LARGE_GI else "small"
    return {
        "labels": {"quota.example.com/tier": tier},
        "status": {"quotaBytes": size * 2**30, "tier": tier},
    }


if __name__ == "__main__":
    run({"sync": sync})
