#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: hpc.pbs developers
# Apache License 2.0 (https://www.apache.org/licenses/LICENSE-2.0), as galaxy.yml says

DOCUMENTATION = r'''
---
module: controller_file
short_description: Write a text file on the Ansible controller, atomically, without a module run
version_added: "0.2.0"
author: hpc.pbs developers (@hpc-pbs)
description:
  - Writes O(content) to O(path) on the Ansible controller, whatever the host of the task
    (as M(ansible.builtin.fetch) writes its C(dest)). It is an action plugin only - nothing
    is sent to a managed host, no connection is opened and no module runs, which makes it
    about ten times cheaper than M(ansible.builtin.copy) with C(delegate_to=localhost)
    (a C(stat) and a C(copy) module run through the local connection, 0.3-0.6 s each).
  - The playbooks of this collection write their reports with it (the audit's drift and
    effective timeouts reports, the rollout's report, the effectiveness report's JSON and
    Prometheus files).
  - The file is written to a temporary file of its directory, given O(mode), then renamed
    over O(path), so a reader sees the old file or the new one, never half of one. A file
    that already holds O(content) is left alone (its mode is set to O(mode) when it
    differs).
  - The file is written by the user who runs ansible-playbook; C(become) does not apply.
    The collection's playbooks check the path with the filter
    P(hpc.pbs.writable_path_problem#filter) before anything is read or changed.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
options:
  path:
    description:
      - The file on the controller. A relative path is taken from the current directory of
        ansible-playbook; C(~) is expanded.
      - Its directory must exist and be writable by this user; a directory is refused.
    type: path
    required: true
  content:
    description: The whole text of the file, written as UTF-8.
    type: str
    required: true
  mode:
    description:
      - The file's permission bits, an octal string such as C("0644") or C("640"), or an
        integer (C(0o644) in Python, 420).
      - Accepted - 0 to 07777.
    type: raw
    default: "0644"
attributes:
  check_mode:
    support: full
    description: In check mode nothing is written; the result says whether it would be changed.
  diff_mode:
    support: full
    description: The old and the new text (and mode) are shown with C(--diff).
  platform:
    platforms: posix
    description: Runs on the controller only.
notes:
  - A failure (a missing directory, no permission, a directory at O(path)) fails the task
    naming O(path) and the cause, and leaves no temporary file behind.
seealso:
  - module: hpc.pbs.accounting_report
    description: Its JSON document and Prometheus text are written with this module by the playbook C(hpc.pbs.report).
  - name: ansible.builtin.copy
    description: The module this one stands in for where the file is the controller's.
    link: https://docs.ansible.com/ansible/latest/collections/ansible/builtin/copy_module.html
'''

EXAMPLES = r'''
- name: Write the report on the controller
  hpc.pbs.controller_file:
    path: /var/tmp/pbs-audit.json
    content: "{{ report | to_nice_json(indent=2) }}\n"
    mode: "0644"
'''

RETURN = r'''
path:
  description: The absolute path of the file written (or that would be, in check mode).
  returned: success
  type: str
  sample: /var/tmp/pbs-audit.json
mode:
  description: The file's mode, as four octal digits.
  returned: success
  type: str
  sample: "0644"
'''
