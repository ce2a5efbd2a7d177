package core

import (
	"crypto/rand"
	"encoding/hex"

	"github.com/google/uuid"
)

// NewTaskID returns a new task id: a UUIDv7 string (SPEC §3), time-ordered so
// ids sort roughly by creation.
func NewTaskID() string {
	// uuid.NewV7 fails only when crypto/rand fails, which the Go runtime
	// treats as fatal anyway (crypto/rand.Read never returns an error).
	return uuid.Must(uuid.NewV7()).String()
}

// NewShortID returns 12 lowercase hex characters (48 random bits) from
// crypto/rand: the id format of jobs, approvals and grants (SPEC §3).
func NewShortID() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // never fails (Go ≥ 1.24 crashes the program instead)
	return hex.EncodeToString(b[:])
}
