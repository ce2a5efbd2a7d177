package core_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/internal/registrytest"
)

// testKey returns a fresh ed25519 public key in authorized_keys form.
func testKey(t *testing.T, comment string) (string, ssh.PublicKey) {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pk))) + " " + comment, pk
}

func TestOperatorsAddListRemove(t *testing.T) {
	f := registrytest.New(t)
	k1, pk1 := testKey(t, "alice@laptop")
	k2, pk2 := testKey(t, "alice@desk")
	o, err := f.Reg.AddOperator(f.Ctx, "alice", core.RoleOperator, []byte("# keys\n"+k1+"\n\n"+k2+"\n"), "root@host")
	f.Must(err)
	if len(o.Keys) != 2 || o.Keys[0].Fingerprint != ssh.FingerprintSHA256(pk1) {
		t.Fatalf("keys = %+v", o.Keys)
	}
	got, err := f.Reg.OperatorByKey(f.Ctx, pk2)
	f.Must(err)
	if got.Name != "alice" || got.Role != core.RoleOperator || got.CreatedBy != "root@host" || got.CreatedAt != f.Now() {
		t.Fatalf("by key = %+v", got)
	}
	k3, pk3 := testKey(t, "bob")
	if _, err := f.Reg.AddOperator(f.Ctx, "bob", core.RoleReadonly, []byte(k3), "root@host"); err != nil {
		t.Fatal(err)
	}
	ops, err := f.Reg.ListOperators(f.Ctx)
	f.Must(err)
	if len(ops) != 2 || ops[0].Name != "alice" || ops[1].Name != "bob" || ops[1].Role != core.RoleReadonly || len(ops[1].Keys) != 1 {
		t.Fatalf("list = %+v", ops)
	}
	f.Must(f.Reg.RemoveOperator(f.Ctx, "alice", "root@host"))
	if _, err := f.Reg.OperatorByKey(f.Ctx, pk1); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("removed operator's key: err = %v", err)
	}
	if got, err := f.Reg.OperatorByKey(f.Ctx, pk3); err != nil || got.Name != "bob" {
		t.Fatalf("bob = %+v, %v", got, err)
	}
	// The journal names who did it.
	var evs []core.Event
	f.Must(f.DB.View(f.Ctx, func(tx core.Tx) error {
		var err error
		evs, err = tx.Events(core.EntityOperator, "alice")
		return err
	}))
	if len(evs) != 2 || evs[0].To != "operator" || evs[1].From != "operator" || evs[1].To != "" || evs[1].Actor != "root@host" {
		t.Fatalf("journal = %+v", evs)
	}
}

func TestOperatorsErrors(t *testing.T) {
	f := registrytest.New(t)
	k1, _ := testKey(t, "a")
	k2, _ := testKey(t, "b")
	f.Must(func() error {
		_, err := f.Reg.AddOperator(f.Ctx, "alice", core.RoleOperator, []byte(k1), "x")
		return err
	}())
	cases := []struct {
		name, op string
		role     core.Role
		keys     string
		want     error
		text     string // the message says this, and never "concurrently"
	}{
		{"existing name", "alice", core.RoleOperator, k2, core.ErrConflict, `operator "alice" already exists`},
		{"key of another operator", "bob", core.RoleOperator, k1, core.ErrConflict, `already belongs to operator "alice"`},
		{"bad role", "bob", "admin", k2, core.ErrInvalid, ""},
		{"bad name", "bob smith", core.RoleOperator, k2, core.ErrInvalid, ""},
		{"empty name", "", core.RoleOperator, k2, core.ErrInvalid, ""},
		{"no key", "bob", core.RoleOperator, "# nothing\n", core.ErrInvalid, ""},
		{"not a key", "bob", core.RoleOperator, "ssh-ed25519 AAAAnotbase64", core.ErrInvalid, ""},
		{"options", "bob", core.RoleOperator, `command="ls" ` + k2, core.ErrInvalid, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := f.Reg.AddOperator(f.Ctx, c.op, c.role, []byte(c.keys), "x")
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			if c.text != "" && (!strings.Contains(err.Error(), c.text) || strings.Contains(err.Error(), "concurrently")) {
				t.Fatalf("err = %q, want it to say %q (and not that a row changed concurrently)", err, c.text)
			}
		})
	}
	if err := f.Reg.RemoveOperator(f.Ctx, "nobody", "x"); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("remove unknown: %v", err)
	}
	ops, err := f.Reg.ListOperators(f.Ctx)
	f.Must(err)
	if len(ops) != 1 {
		t.Fatalf("a refused add left rows: %+v", ops)
	}
	if got := core.SSHActor("alice", "10.0.0.7:51234"); got != "alice (ssh 10.0.0.7:51234)" {
		t.Fatalf("SSHActor = %q", got)
	}
}

func FuzzParseOperatorKeys(f *testing.F) {
	f.Add([]byte("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl a\n"))
	f.Add([]byte("# c\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		keys, err := core.ParseOperatorKeys(b)
		if err == nil && len(keys) == 0 {
			t.Fatal("no error and no keys")
		}
		for _, k := range keys {
			if !strings.HasPrefix(k.Fingerprint, "SHA256:") || strings.ContainsAny(k.Line, "\n\r") {
				t.Fatalf("bad key %+v", k)
			}
		}
	})
}
