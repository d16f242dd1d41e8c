"""The privacy-audit harness (empirical lower bounds on epsilon from achievable releases) and the
mutation self-test that checks the audits and rate checks catch planted faults."""
