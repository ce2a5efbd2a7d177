-- clawpit registry schema v3: operators of `clawpit serve` (SPEC §13). An operator
-- has a name, a role and one or more SSH public keys; a key belongs to one operator.
CREATE TABLE operators (
    name       TEXT PRIMARY KEY,
    role       TEXT NOT NULL CHECK (role IN ('operator', 'readonly')),
    created_by TEXT NOT NULL,
    created_at INTEGER NOT NULL
);

CREATE TABLE operator_keys (
    fingerprint TEXT PRIMARY KEY, -- SHA256:… as ssh-keygen -l prints it
    operator    TEXT NOT NULL REFERENCES operators(name) ON DELETE CASCADE,
    key         TEXT NOT NULL     -- the authorized_keys line (type, base64, comment)
);
CREATE INDEX operator_keys_operator ON operator_keys(operator);
