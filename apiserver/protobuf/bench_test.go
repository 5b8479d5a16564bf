package protobuf

import "testing"

// BenchmarkToJSON converts a Deployment the size `kubectl create
// deployment` sends (metadata, selector, a one-container template).
func BenchmarkToJSON(b *testing.B) {
	meta := pb{}.str(1, "web").str(3, "default").msg(11, pb{}.str(1, "app").str(2, "web"))
	ctr := pb{}.str(1, "nginx").str(2, "nginx:1.27").msg(6, pb{}.varint(3, 80).str(4, "TCP")).
		msg(8, pb{}).str(13, "IfNotPresent")
	tmpl := pb{}.msg(1, pb{}.msg(11, pb{}.str(1, "app").str(2, "web"))).msg(2, pb{}.msg(2, ctr).str(3, "Always"))
	spec := pb{}.varint(1, 3).msg(2, pb{}.msg(1, pb{}.str(1, "app").str(2, "web"))).msg(3, tmpl)
	body := envelope("apps/v1", "Deployment", pb{}.msg(1, meta).msg(2, spec).msg(3, pb{}))
	if _, err := ToJSON(body, true); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := ToJSON(body, true); err != nil {
			b.Fatal(err)
		}
	}
}
