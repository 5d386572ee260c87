package crmtest_test

import (
	"testing"

	"github.com/bookingsaga/bookingsaga/internal/crm/crmcontract"
)

func TestTheGenericCRMKeepsTheContract(t *testing.T) {
	t.Parallel()
	crmcontract.Run(t, func(t *testing.T) crmcontract.Fake {
		fake, c := setupCRM(t, "secret")
		_, wrong := setupCRM(t, "wrong")
		return crmcontract.Fake{CRM: c, WrongToken: wrong, UpsertOp: "viewings.upsert", Inject: fake.Inject, Calls: fake.Calls,
			Count: func() int { return len(fake.Records()) }, Delete: fake.Delete}
	})
}
