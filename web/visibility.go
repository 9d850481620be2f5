package web

// The visibility choices of the document form make sense for the person
// editing (product.md section 9): "My department" is offered only to
// someone who has one, "Project members" only when there is a project to
// choose (the editor's own, or every project for an administrator, as
// documents.Service.Projects lists them), each kept when the document already
// has it. A refused choice names its field, since the department is not a
// field of the form and the project's select may sit far from the
// visibility's.

// fieldNames lead the messages of the fields whose message alone does not
// say which field it is about.
var fieldNames = map[string]string{
	"department_id": "Department",
	"project_id":    "Project",
}

// namedFields returns fields with each message of fieldNames led by the
// field's name ("Department is required for department visibility").
func namedFields(fields map[string]string) map[string]string {
	out := make(map[string]string, len(fields))
	for k, v := range fields {
		if name, ok := fieldNames[k]; ok {
			v = name + " " + v
		}
		out[k] = v
	}
	return out
}
