package api

import (
	"net/http"

	"github.com/bookingsaga/bookingsaga/internal/edge"
	"github.com/bookingsaga/bookingsaga/receipt"
)

// The API's answers are wire structs of their own, not the domain's
// records: a field renamed inside the service does not change what agents
// parse. (Receipts are already a wire shape: package receipt.)

// ResourceAnswer is PUT /v1/resources/{id}'s answer: the resource as
// stored.
type ResourceAnswer struct {
	ID string `json:"id"`
	ResourceBody
}

// present gives a receipt its wire shape and the spoken line in the
// language the request asks for (?language=, else the API's). It reads
// and writes nothing.
func (s *Server) present(req *http.Request, r receipt.Receipt) receipt.Receipt {
	r = receipt.OnWire(r)
	lang, err := edge.Language(req.URL.Query().Get("language"), s.set.Language)
	if err != nil {
		lang = s.set.Language
	}
	r.Spoken = s.set.Names.Speaker(req.Context(), lang, r.PropertyRef, r.AgentRef).Receipt(r)
	return r
}
