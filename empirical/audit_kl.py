"""KL audits (placeholder)."""
