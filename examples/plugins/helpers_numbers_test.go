package examples_test

import (
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"
)

// numberTexts are JSON numbers for the C kit's tw_int64 and tw_number,
// judged against Go's strconv and math/big.
var numberTexts = []string{
	"0", "-0", "1", "-1", "42", "3.0", "3e2", "300e-2", "1.5", "1e-2", "0.5e1", "1E5", "1e+5", "2.50e1",
	"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
	"922337203685477580.7e1", "92233720368547758070e-1", "1e18", "1e19", "-1e18", "0e400", "0.0e-400",
	"0.1", "123.456", "0.000001", "2.5e-3", "1e22", "1e23", "123456789012345", "1234567890123456789",
	"12345678901234567890", "1e308", "1.7976931348623157e308", "1e309", "-1e309", "5e-324", "1e-400",
	"100000000000000000000000", "4.9e-324", "2.2250738585072014e-308", "1e-300", "123456.789e-200",
}

// TestCKitNumbers holds tw_int64 to exactness (an integral value within
// int64, in any JSON form) and tw_number to strconv.ParseFloat: bit for bit
// on numbers with at most 15 significant digits and a small exponent (the
// documented fast path), within 4 units in the last place elsewhere.
func TestCKitNumbers(t *testing.T) {
	v := loadVectorsPlugin(t, quietRuntime(t), buildVectors(t, "pdk/c/vectors"), nil)
	for _, text := range numberTexts {
		code, reason, err := v.ask(map[string]any{"int64": json.Number(text)})
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		r, _ := new(big.Rat).SetString(text)
		wantInt := r.IsInt() && r.Num().IsInt64()
		switch {
		case wantInt && (code != "int64" || reason != r.Num().String()):
			t.Errorf("tw_int64(%s) = %s %q, want %s", text, code, reason, r.Num())
		case !wantInt && code != "error":
			t.Errorf("tw_int64(%s) = %s %q, want false", text, code, reason)
		}

		code, reason, err = v.ask(map[string]any{"number": json.Number(text)})
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		want, perr := strconv.ParseFloat(text, 64)
		if perr != nil {
			if code != "error" {
				t.Errorf("tw_number(%s) = %s %q, want false (%v)", text, code, reason, perr)
			}
			continue
		}
		bits, berr := strconv.ParseUint(reason, 16, 64)
		if code != "number" || berr != nil {
			t.Errorf("tw_number(%s) = %s %q, want %v", text, code, reason, want)
			continue
		}
		got := math.Float64frombits(bits)
		diff := int64(bits) - int64(math.Float64bits(want))
		if diff < 0 {
			diff = -diff
		}
		if fastPath(text) && diff != 0 || diff > 4 {
			t.Errorf("tw_number(%s) = %v (%d ulp off), want %v", text, got, diff, want)
		}
	}
}

// fastPath reports whether text has at most 15 significant digits and a
// decimal exponent within +-22 once they are read as an integer.
func fastPath(text string) bool {
	mant, exp := strings.TrimPrefix(text, "-"), 0
	if i := strings.IndexAny(mant, "eE"); i >= 0 {
		exp, _ = strconv.Atoi(mant[i+1:])
		mant = mant[:i]
	}
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		exp -= len(mant) - i - 1
		mant = mant[:i] + mant[i+1:]
	}
	mant = strings.TrimLeft(mant, "0")
	return mant == "" || len(mant) <= 15 && exp >= -22 && exp <= 22
}
