"""textfmt: small helpers for showing people's names."""
