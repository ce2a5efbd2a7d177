package cli

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/termtext"
	"github.com/spf13/cobra"
)

// operatorCommand is `clawpit operator add|list|remove` (README "Serve the console over SSH"): who may
// connect to `clawpit serve`, with which keys and role.
func operatorCommand(a *app) *cobra.Command {
	c := groupCommand("operator", "Operators of `clawpit serve`: add, list, remove")
	var role string
	var keyFiles []string
	add := &cobra.Command{
		Use:   "add NAME --role operator|readonly --key FILE|-",
		Short: "Register an operator with one or more SSH public keys (a file in authorized_keys form, or - for stdin)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := requireFlag(cmd, "role", "key"); err != nil {
				return err
			}
			r := core.Role(role)
			if !r.Valid() {
				return core.Invalidf("--role %q: want operator or readonly", role)
			}
			var keys []byte
			for _, f := range keyFiles {
				b, err := a.readKeyFile(f)
				if err != nil {
					return err
				}
				keys = append(append(keys, b...), '\n')
			}
			reg, err := a.registryCreate(cmd.Context())
			if err != nil {
				return err
			}
			op, err := reg.AddOperator(cmd.Context(), args[0], r, keys, core.OperatorActor())
			if err != nil {
				return err
			}
			done := fmt.Sprintf("added (%s, %s)", op.Role, countKeys(len(op.Keys)))
			return a.printMutation(core.Result{Applied: true}, core.EntityOperator, op, "operator "+op.Name, done)
		},
	}
	add.Flags().StringVar(&role, "role", "", "operator (every action) or readonly (watch only; enforced by the server)")
	add.Flags().StringArrayVar(&keyFiles, "key", nil, "public key file (authorized_keys lines, e.g. ~/.ssh/id_ed25519.pub), or - for stdin; repeatable")
	list := &cobra.Command{
		Use:   "list",
		Short: "List operators with their role and key fingerprints",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			reg, err := a.registry(cmd.Context())
			if err != nil {
				return err
			}
			ops, err := reg.ListOperators(cmd.Context())
			if err != nil {
				return err
			}
			if ops == nil {
				ops = []core.Operator{}
			}
			return listOutput(a, "operators", ops, []string{"NAME", "ROLE", "KEYS", "AGE", "CREATED BY"}, func(n time.Time, o *core.Operator) []string {
				keys := "-"
				if len(o.Keys) > 0 {
					keys = o.Keys[0].Fingerprint
					if len(o.Keys) > 1 {
						keys += " +" + strconv.Itoa(len(o.Keys)-1)
					}
				}
				return []string{termtext.Exact(o.Name, 64), string(o.Role), keys, age(n, o.CreatedAt), termtext.Exact(string(o.CreatedBy), 60)}
			})
		},
	}
	remove := &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove an operator: their keys are refused from now on and their open sessions can no longer act",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			reg, err := a.registry(cmd.Context())
			if err != nil {
				return err
			}
			if err := reg.RemoveOperator(cmd.Context(), args[0], core.OperatorActor()); err != nil {
				return err
			}
			return a.printMutation(core.Result{Applied: true}, core.EntityOperator, map[string]string{"name": args[0]}, "operator "+args[0], "removed")
		},
	}
	c.AddCommand(add, list, remove)
	return c
}

// readKeyFile reads a public key file, or stdin for "-" (at most 1 MiB).
// Errors: ErrInvalid naming the file.
func (a *app) readKeyFile(name string) ([]byte, error) {
	var r io.Reader
	if name == "-" {
		r = a.stdin
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, core.Invalidf("--key %s: %v", name, err)
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil {
		return nil, core.Invalidf("--key %s: %v", name, err)
	}
	return b, nil
}

// countKeys is "1 key", "3 keys".
func countKeys(n int) string {
	if n == 1 {
		return "1 key"
	}
	return strconv.Itoa(n) + " keys"
}
