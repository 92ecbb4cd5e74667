package qmgr

import "strings"

const helpGeneral = `Usage: command object [name[,name...]] [attribute[.resource] op value[, ...]]

Commands (any prefix will do: s = set, l = list, p = print, c = create,
d = delete, u = unset, a = active):
  create  delete  set  unset  list  print  active  help  quit  exit
Objects: server, queue, node, sched (any prefix: s, q, n, sc)
Operators: =  +=  -=

Separate commands with ';'; '#' starts a comment; end a line with '\'
to continue it on the next one.
For more, type "help" followed by one of: active create delete set unset
list print quit exit operator value name attribute
`

// helpText is the text help prints for topic ("" for the overview). A
// topic is recognised by its first word, like the commands themselves.
func helpText(topic string) string {
	word, _, _ := strings.Cut(strings.TrimSpace(topic), " ")
	if word == "" {
		return helpGeneral
	}
	for _, t := range [...]struct{ name, text string }{
		{"active", `active object [name[,name...]]
  Makes the named objects the default for later commands that name none of
  that type. Without names, shows the active objects.
  Example: active queue workq,batch
`},
		{"create", `create object name[,name...] [attribute = value[, ...]]
  Creates queues or nodes, optionally setting attributes.
  Examples: create queue batch queue_type = execution
            create node n1 Mom = n1.example.com
`},
		{"delete", `delete object name[,name...]
  Deletes queues or nodes.
  Example: delete queue batch
`},
		{"set", `set object [name[,name...]] attribute[.resource] op value[, ...]
  Sets attributes of the server, queues, nodes or the scheduler (sched:
  its one scheduler is default, and may go unnamed).
  Examples: set server scheduling = true
            set queue batch resources_max.walltime = 24:00:00
            set server managers += admin@*.example.com
            set sched scheduler_iteration = 300
`},
		{"unset", `unset object [name[,name...]] attribute[.resource][, ...]
  Returns attributes to their defaults.
  Example: unset queue batch resources_max.walltime
`},
		{"list", `list object [name[,name...]] [attribute[.resource][, ...]]
  Shows objects and their attributes, or only the attributes named.
  Example: list queue batch max_running, enabled
`},
		{"print", `print object [name[,name...]] [attribute[.resource][, ...]]
  Writes qmgr commands that recreate the objects; "print server" covers
  the queues, the server and the nodes.
  Example: qmgr -c "print server" > config.qmgr
`},
		{"quit", "quit\n  Ends qmgr.\n"},
		{"exit", "exit\n  Ends qmgr.\n"},
		{"operator", `Operators:
  =   set the attribute to the value
  +=  add the value (to a list, or to a number)
  -=  remove the value (from a list, or from a number)
`},
		{"value", `Values run to white space or a comma. Quote a value that holds white
space, commas, quotes, ';' or '#' with " or '; quoted and unquoted pieces
next to each other join into one value.
`},
		{"name", `Names: name[@server], several separated by commas without white space.
"@server" alone stands for every object of the type at that server.
`},
		{"attribute", `Attributes: attribute or attribute.resource, e.g. enabled or
resources_max.ncpus. "list" shows the attributes an object has.
`},
	} {
		if word == t.name {
			return t.text
		}
	}
	return "No help available on: " + word + "\n"
}
