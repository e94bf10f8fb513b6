"""The audit log: who changed, exported, forgot or reconfigured what, when and from where.

Services call audit.services.record (imported as `from audit import services as audit`); the log holds
ids, field names and counts, never memory content, profile text, messages or secrets.
"""
