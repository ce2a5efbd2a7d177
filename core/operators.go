package core

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"golang.org/x/crypto/ssh"
)

// Role is what an operator of `clawpit serve` may do (README "Serve the console over SSH").
type Role string

const (
	// RoleOperator may take every console action.
	RoleOperator Role = "operator"
	// RoleReadonly watches: the server refuses every action of the session.
	RoleReadonly Role = "readonly"
)

// Valid reports whether r is a known role.
func (r Role) Valid() bool { return r == RoleOperator || r == RoleReadonly }

// EntityOperator names operators in the event journal.
const EntityOperator = "operator"

// OperatorKey is one SSH public key of an operator.
type OperatorKey struct {
	Fingerprint string `json:"fingerprint"` // SHA256:… (ssh-keygen -l)
	Line        string `json:"key"`         // authorized_keys form: type base64 [comment]
}

// Operator is a person allowed to connect to `clawpit serve` (README "Serve the console over SSH").
type Operator struct {
	Name      string        `json:"name"`
	Role      Role          `json:"role"`
	Keys      []OperatorKey `json:"keys"`
	CreatedBy Actor         `json:"created_by"`
	CreatedAt Timestamp     `json:"created_at"`
}

// OperatorTx is the part of a transaction that keeps operators; the SQLite
// store implements it next to Tx. Kept apart from Tx so stores without
// operators still satisfy Tx.
type OperatorTx interface {
	// InsertOperator stores o and its keys: ErrConflict when the name or a
	// key's fingerprint exists.
	InsertOperator(o *Operator) error
	// GetOperator returns the operator name with its keys; ErrNotFound.
	GetOperator(name string) (*Operator, error)
	// DeleteOperator removes the operator and its keys; ErrNotFound.
	DeleteOperator(name string) error
	// ListOperators returns every operator with its keys, by name.
	ListOperators() ([]Operator, error)
	// OperatorByFingerprint returns the operator holding the key; ErrNotFound.
	OperatorByFingerprint(fp string) (*Operator, error)
}

// operatorName is what a name may look like: it lands in the journal's actor
// and in log lines, so no spaces or control characters.
var operatorName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$`)

// ParseOperatorKeys reads authorized_keys text (one key per line; blank
// lines and # comments skipped; options before the key are refused) and
// returns the keys with their SHA-256 fingerprints. Errors: ErrInvalid
// naming the line when a line is not a public key, or when there is none.
func ParseOperatorKeys(text []byte) ([]OperatorKey, error) {
	var keys []OperatorKey
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		pk, comment, options, _, err := ssh.ParseAuthorizedKey([]byte(line))
		if err != nil {
			return nil, Invalidf("key line %d is not an SSH public key: %v", n, err)
		}
		if len(options) > 0 {
			return nil, Invalidf("key line %d has authorized_keys options (%s): give the bare key", n, strings.Join(options, ","))
		}
		fp := ssh.FingerprintSHA256(pk)
		if seen[fp] {
			continue
		}
		seen[fp] = true
		l := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pk)))
		if c := strings.TrimSpace(comment); c != "" {
			l += " " + c
		}
		keys = append(keys, OperatorKey{Fingerprint: fp, Line: l})
	}
	if err := sc.Err(); err != nil {
		return nil, Invalidf("reading keys: %v", err)
	}
	if len(keys) == 0 {
		return nil, Invalidf("no SSH public key given")
	}
	return keys, nil
}

func operatorTx(tx Tx) (OperatorTx, error) {
	ot, ok := tx.(OperatorTx)
	if !ok {
		return nil, fmt.Errorf("this registry store keeps no operators")
	}
	return ot, nil
}

// AddOperator registers an operator of `clawpit serve` with role and the
// public keys in keys (authorized_keys text), journaled as actor (README "Serve the console over SSH"). Errors: ErrInvalid for a bad name, role or key; ErrConflict when
// the name exists or a key already belongs to an operator.
func (r *Registry) AddOperator(ctx context.Context, name string, role Role, keys []byte, actor Actor) (*Operator, error) {
	if !operatorName.MatchString(name) {
		return nil, Invalidf("operator name %q: use letters, digits, . _ @ - (at most 64, starting with a letter or digit)", name)
	}
	if !role.Valid() {
		return nil, Invalidf("role %q: want operator or readonly", role)
	}
	ks, err := ParseOperatorKeys(keys)
	if err != nil {
		return nil, err
	}
	o := &Operator{Name: name, Role: role, Keys: ks, CreatedBy: actor}
	err = r.store.Update(ctx, func(tx Tx) error {
		ot, err := operatorTx(tx)
		if err != nil {
			return err
		}
		if _, err := ot.GetOperator(name); err == nil {
			return Conflictf("operator %q already exists (remove it first)", name)
		} else if !errors.Is(err, ErrNotFound) {
			return err
		}
		for _, k := range ks {
			if other, err := ot.OperatorByFingerprint(k.Fingerprint); err == nil {
				return Conflictf("key %s already belongs to operator %q", k.Fingerprint, other.Name)
			} else if !errors.Is(err, ErrNotFound) {
				return err
			}
		}
		o.CreatedAt = r.now()
		if err := ot.InsertOperator(o); err != nil {
			return err
		}
		fps := make([]string, len(ks))
		for i, k := range ks {
			fps[i] = k.Fingerprint
		}
		return journal(tx, o.CreatedAt, EntityOperator, name, "", string(role), actor,
			"added with key "+strings.Join(fps, ", "), true)
	})
	if err != nil {
		return nil, err
	}
	return o, nil
}

// RemoveOperator deletes an operator and its keys, journaled as actor; its
// open sessions are not cut, but every later action of theirs is refused.
// Errors: ErrNotFound.
func (r *Registry) RemoveOperator(ctx context.Context, name string, actor Actor) error {
	return r.store.Update(ctx, func(tx Tx) error {
		ot, err := operatorTx(tx)
		if err != nil {
			return err
		}
		o, err := ot.GetOperator(name)
		if err != nil {
			return err
		}
		if err := ot.DeleteOperator(name); err != nil {
			return err
		}
		return journal(tx, r.now(), EntityOperator, name, string(o.Role), "", actor, "removed", true)
	})
}

// ListOperators returns every operator with its keys, by name.
func (r *Registry) ListOperators(ctx context.Context) ([]Operator, error) {
	var out []Operator
	err := r.store.View(ctx, func(tx Tx) error {
		ot, err := operatorTx(tx)
		if err != nil {
			return err
		}
		out, err = ot.ListOperators()
		return err
	})
	return out, err
}

// OperatorByKey returns the operator holding the public key pk; ErrNotFound
// when no operator does.
func (r *Registry) OperatorByKey(ctx context.Context, pk ssh.PublicKey) (*Operator, error) {
	return r.OperatorByFingerprint(ctx, ssh.FingerprintSHA256(pk))
}

// OperatorByFingerprint returns the operator holding the key with SHA-256
// fingerprint fp ("SHA256:…"); ErrNotFound when none does.
func (r *Registry) OperatorByFingerprint(ctx context.Context, fp string) (*Operator, error) {
	var out *Operator
	err := r.store.View(ctx, func(tx Tx) error {
		ot, err := operatorTx(tx)
		if err != nil {
			return err
		}
		out, err = ot.OperatorByFingerprint(fp)
		return err
	})
	return out, err
}

// SSHActor is the journal's actor for an action from a `clawpit serve`
// session: the operator's name plus the SSH client address (docs/contract.md "Entities and statuses"), e.g.
// "alice (ssh 10.0.0.7:51234)".
func SSHActor(name, addr string) Actor {
	return Actor(name + " (ssh " + addr + ")")
}
