package ingress

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

func TestParseModSecuritySnippet(t *testing.T) {
	for name, tc := range map[string]struct {
		in   string
		want config.ModSecurity
		bad  string // a part of the error; "" when accepted
	}{
		"empty":            {in: ""},
		"engine on":        {in: "SecRuleEngine On", want: config.ModSecurity{Engine: "On"}},
		"engine any case":  {in: "SecRuleEngine detectiononly", want: config.ModSecurity{Engine: "DetectionOnly"}},
		"engine off":       {in: "  SecRuleEngine Off  ", want: config.ModSecurity{Engine: "Off"}},
		"comments, blanks": {in: "# block\n\n\tSecRuleEngine On\n# end", want: config.ModSecurity{Engine: "On"}},
		"every directive": {
			in: "SecRuleEngine On\nSecRequestBodyAccess Off\nSecRequestBodyLimit 1048576\nSecRuleRemoveById 941100 942000-942999\nSecRuleRemoveById 920350\nSecRuleRemoveByTag \"attack-xss\"\nSecRuleRemoveByTag OWASP_CRS/WEB_ATTACK/SQL_INJECTION",
			want: config.ModSecurity{Engine: "On", RequestBodyAccess: "Off", RequestBodyLimit: 1048576,
				RemoveByID: []string{"941100", "942000-942999", "920350"}, RemoveByTag: []string{"attack-xss", "OWASP_CRS/WEB_ATTACK/SQL_INJECTION"}},
		},
		"SecRule is refused":      {in: "SecRuleEngine On\nSecRule ARGS \"@rx x\" \"id:1,deny\"", bad: `line 2: "SecRule" is not one of`},
		"Include is refused":      {in: "Include /etc/passwd", bad: `"Include" is not one of`},
		"audit log is refused":    {in: "SecAuditLog /dev/stdout", bad: `"SecAuditLog" is not one of`},
		"nginx text is refused":   {in: "SecRuleEngine On';\nlocation / {", bad: "engine"},
		"engine value":            {in: "SecRuleEngine Maybe", bad: "not On, Off or DetectionOnly"},
		"engine twice":            {in: "SecRuleEngine On\nSecRuleEngine Off", bad: "appears twice"},
		"engine without argument": {in: "SecRuleEngine", bad: "takes one argument"},
		"engine two arguments":    {in: "SecRuleEngine On Off", bad: "takes one argument"},
		"id zero":                 {in: "SecRuleRemoveById 0", bad: "rule id"},
		"id leading zero":         {in: "SecRuleRemoveById 0941100", bad: "rule id"},
		"id too large":            {in: "SecRuleRemoveById 2147483648", bad: "rule id"},
		"range reversed":          {in: "SecRuleRemoveById 942999-942000", bad: "rule id"},
		"range open":              {in: "SecRuleRemoveById 942000-", bad: "rule id"},
		"id with quote":           {in: "SecRuleRemoveById \"941100\"", bad: "rule id"},
		"id without argument":     {in: "SecRuleRemoveById", bad: "at least one"},
		"tag with quote inside":   {in: "SecRuleRemoveByTag a\"b", bad: "tag"},
		"tag with space":          {in: "SecRuleRemoveByTag \"a b\"", bad: "takes one argument"},
		"body limit zero":         {in: "SecRequestBodyLimit 0", bad: "request body limit"},
		"body limit unit":         {in: "SecRequestBodyLimit 1m", bad: "request body limit"},
		"body limit too large":    {in: "SecRequestBodyLimit 1073741825", bad: "request body limit"},
		"body access value":       {in: "SecRequestBodyAccess Yes", bad: "not On or Off"},
		"too long":                {in: strings.Repeat("#", maxModSecuritySnippet+1), bad: "longer than"},
		"too many removals":       {in: "SecRuleRemoveById" + strings.Repeat(" 1", config.MaxModSecurityRemovals+1), bad: "more than"},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := parseModSecuritySnippet(tc.in)
			if tc.bad != "" {
				if err == nil || !strings.Contains(err.Error(), tc.bad) {
					t.Fatalf("error %v, want one with %q", err, tc.bad)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			if err := got.Validate(); got.Engine != "" && err != nil {
				t.Errorf("the parsed value fails Validate: %v", err)
			}
		})
	}
}

// TestModSecurityAnnotations: the annotations over the ConfigMap's keys,
// as ingress-nginx combines them (buildModSecurityForLocation).
func TestModSecurityAnnotations(t *testing.T) {
	type kv = map[string]string
	for name, tc := range map[string]struct {
		ann    kv
		global config.GlobalModSecurity
		want   *config.ModSecurity
		bad    string
	}{
		"nothing": {},
		"the ConfigMap turns it on": {global: config.GlobalModSecurity{Enable: true},
			want: &config.ModSecurity{Engine: "DetectionOnly"}},
		"the ConfigMap's CRS":         {global: config.GlobalModSecurity{Enable: true, CRS: true}, want: &config.ModSecurity{Engine: "DetectionOnly", CRS: true}},
		"the CRS alone turns nothing": {global: config.GlobalModSecurity{CRS: true}},
		"the annotation turns it on":  {ann: kv{"enable-modsecurity": "true"}, want: &config.ModSecurity{Engine: "DetectionOnly"}},
		"the annotation turns the ConfigMap's off": {ann: kv{"enable-modsecurity": "false"},
			global: config.GlobalModSecurity{Enable: true}},
		"a snippet without enable is not applied": {ann: kv{"modsecurity-snippet": "SecRuleEngine On"}},
		"the annotation's CRS, snippet and transaction id": {
			ann:  kv{"enable-modsecurity": "true", "enable-owasp-core-rules": "true", "modsecurity-snippet": "SecRuleEngine On\nSecRuleRemoveById 941100", "modsecurity-transaction-id": "$request_id"},
			want: &config.ModSecurity{Engine: "On", CRS: true, RemoveByID: []string{"941100"}, TransactionID: "$request_id"},
		},
		"the ConfigMap's with the annotation's snippet": {ann: kv{"modsecurity-snippet": "SecRuleEngine On"},
			global: config.GlobalModSecurity{Enable: true, CRS: true}, want: &config.ModSecurity{Engine: "On", CRS: true}},
		"a refused directive fails closed": {ann: kv{"enable-modsecurity": "true", "modsecurity-snippet": "SecRuleEngine On\nSecRule ARGS x"},
			want: &config.ModSecurity{Engine: "DetectionOnly", Unavailable: true}, bad: `"SecRule" is not one of`},
		"a transaction id that is not one variable": {ann: kv{"enable-modsecurity": "true", "modsecurity-transaction-id": "$request_id;"},
			want: &config.ModSecurity{Engine: "DetectionOnly", Unavailable: true}, bad: "not one nginx variable"},
		"enable not a boolean": {ann: kv{"enable-modsecurity": "yes"}, global: config.GlobalModSecurity{Enable: true},
			want: &config.ModSecurity{Engine: "DetectionOnly", Unavailable: true}, bad: "true or false"},
	} {
		t.Run(name, func(t *testing.T) {
			in := map[string]string{}
			for k, v := range tc.ann {
				in[AnnotationPrefix+k] = v
			}
			a := parseAnnotations(in)
			problems := strings.Join(a.Problems, "\n")
			if (tc.bad == "") != (problems == "") || !strings.Contains(problems, tc.bad) {
				t.Fatalf("problems %q, want one with %q", problems, tc.bad)
			}
			if tc.bad != "" && !strings.Contains(problems, "answer 503") {
				t.Errorf("problem %q does not say the routes answer 503", problems)
			}
			if got := intent.ResolveModSecurity(a.ModSecurity, &tc.global); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// FuzzModSecuritySnippet: an accepted snippet gives a value Validate
// accepts, whose fields hold nothing that could end a directive or a
// quoted argument of the rules file, nor start another line.
func FuzzModSecuritySnippet(f *testing.F) {
	for _, seed := range []string{"SecRuleEngine On", "SecRuleRemoveById 1 2-3\nSecRuleRemoveByTag \"a/b\"", "SecRequestBodyLimit 10\nSecRequestBodyAccess off",
		"SecRule ARGS x", "SecRuleRemoveByTag \"a\nInclude /x\"", "# c\nSecRuleEngine DetectionOnly\r"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, v string) {
		m, err := parseModSecuritySnippet(v)
		if err != nil {
			return
		}
		if m.Engine == "" {
			m.Engine = "DetectionOnly"
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("%q parsed into %+v, which Validate refuses: %v", v, m, err)
		}
		for _, s := range append(append([]string{m.Engine, m.RequestBodyAccess}, m.RemoveByID...), m.RemoveByTag...) {
			if strings.ContainsAny(s, " \t\r\n\"'\\;{}$#") {
				t.Fatalf("%q parsed into a value with a separator: %q", v, s)
			}
		}
	})
}
