package core

import (
	"crypto/rand"
	"encoding/hex"
)

// TaskIDLen is the length of a generated task id (docs/contract.md "Entities and statuses": shown at most 12
// characters long).
const TaskIDLen = 12

// taskIDAlphabet is lowercase Crockford base32: digits and letters without
// i, l, o and u, so an id read aloud or retyped is not mistaken.
const taskIDAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

// NewTaskID returns a new task id: TaskIDLen characters of taskIDAlphabet,
// 60 random bits from crypto/rand (docs/contract.md "Entities and statuses": random leading characters, so short
// prefixes are unique). An 8-character prefix carries 40 random bits: among
// 1,000,000 tasks another id shares it with probability about 1e-6, and
// CreateTask retries a new id whose 8-character prefix is already taken.
func NewTaskID() string {
	var b [TaskIDLen]byte
	_, _ = rand.Read(b[:]) // never fails (Go ≥ 1.24 crashes the program instead)
	for i, v := range b {
		b[i] = taskIDAlphabet[v&31] // 256 is a multiple of 32: uniform
	}
	return string(b[:])
}

// NewShortID returns 12 lowercase hex characters (48 random bits) from
// crypto/rand: the id format of jobs, approvals and grants (docs/contract.md "Entities and statuses").
func NewShortID() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // never fails (Go ≥ 1.24 crashes the program instead)
	return hex.EncodeToString(b[:])
}
