package proto

// Custom resources: a site's own resources, as OpenPBS's "qmgr -c
// 'create resource NAME type=T, flag=F'" defines them. qmgr creates,
// changes and deletes them with manager requests on ObjResource; anyone
// lists them, and the scheduler reads them each cycle to compare values
// as their types.
const (
	// MsgStatusResource asks for custom resources: a StatusRequest (IDs
	// empty: all), reply StatusReply, one Status per resource with its
	// AttrResourceType and AttrResourceFlag.
	MsgStatusResource MsgType = 39
)

// Attributes of a custom resource, OpenPBS's names.
const (
	// AttrResourceType is the type: boolean, float, long, size, string
	// or string_array.
	AttrResourceType = "type"
	// AttrResourceFlag is the flags' letters (OpenPBS's f h i m n q r),
	// empty for none.
	AttrResourceFlag = "flag"
)

func init() {
	msgNames[MsgStatusResource] = "StatusResource"
}

// StatusResources returns the named custom resources, or all.
func (c *Client) StatusResources(req *StatusRequest) ([]Status, []ObjectError, error) {
	return c.status(MsgStatusResource, req)
}
