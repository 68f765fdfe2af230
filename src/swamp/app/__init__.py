"""The application layer: one function per use case. The command line and
serve call these and render what they return (they import nothing else of
the house but errors, util and redaction); workers call the same ones.

This is the only layer that opens a datastore session (lease, pull, run,
push one commit, release: ``lifecycle.reading`` and ``lifecycle.changing``)
and the one that decides which leases a use case needs. The domain below
takes the datastore and what it needs as arguments and never syncs.

Every use case, by what it is about (module: functions):

  repository   repository: open_repo repo_root
               repo_setup: init_repo upgrade_repo plan_upgrade list_agents plan_agent_changes
                           apply_agent_changes plan_agent_removal apply_agent_removal
               doctor: run    doctor_audit: run    local_type_files: local_type_problems
               summarise: summarise             doc_topics: list_topics show_topic
               settings: list_settings get_setting set_setting unset_setting
               names: models methods model_types data workflows vaults steps run_ids  (completion)
  models       model_definitions: search_types describe_type create_model get_model describe_method
                                  search_models validate_models
               models: delete validate evaluate output outputs output_log output_data
               methods: run_method run_batch run_direct check_runnable
               running: running cancel          run_grants: replaced_arguments
  workflows    workflow_files: create get require search validate checked file_schema run_json run_junit
                               can_rerun
               validation_report: errors_of set_errors  (a validate report's errors, one per problem)
               workflows: run resume decide cancel delete evaluate history get_run logs search_runs
                          run_by_id run_log_by_id approvals failed_run
               recorded_workflows: runs_workflow_id recorded_id
               approvals: waiting_run continuable decision_line
               signals: signal waiting settle_timeout ready claim_resume resume_ready resume_finished
               detached_runs: check_startable wait_for_record started_doc
               remote_steps: run_step run_method  (a placed step's session on a worker)
               placed_steps: open_placed_steps attach attached close  (where a run's placed steps go)
               publishing_leases: PublishingLeases  (a step's model lease, only while it publishes)
               cancellable_waits: acquire_turn cancelled_error  (that lease's turn in this process, ended by a cancel)
               one_lane_runs: qualifies OneLane  (a chain's lease kept, its end in its last commit)
               run_history: index_for history_page    runs: history collect doctor
               interrupted_runs: find_orphaned_runs mark_interrupted reap heartbeat replicas
  schedules    schedules: claim claims get_trigger set_trigger remove_trigger workflow_triggers
               trigger_list: trigger_rows next_fire last_scheduled_run
               webhook_deliveries: check_delivery record
  data         data: get list_names versions search query rename delete prune gc
               data_owners: owner workflow_names
  reports      reports: search describe list_reports get selection for_method after_method
                        for_workflow after_workflow
  vaults       vaults: create search describe validate put check_put read_secret list_keys delete exists
                       inspect annotate audit_trail type_search migrate
               vault_access: acting_for  (on whose behalf a run reads vaults)
  extensions   extensions: list_extensions search info pull install_all update outdated remove
                           trust_list trust_add trust_rm probe
               extension_authoring: new check fmt publish source_add source_list source_rm
               extension_probe: probe probe_source probe_main  (an extension's types load)
               extension_review: history_of approve reject
  datastore    datastore: setup_filesystem setup_object_store status sync lock_status lock_release
                          history verify collect compact type_search
               datastore_conflicts: list_conflicts restore drop   datastore_upgrade: upgrade
               namespaces: list_namespaces set_namespace unset migrate
               managed_config: attach status publish publish_edit edit_privately migrate refresh
  access       access: read change shared
               access_admin: create_grant list_grants revoke_grant create_group add_member remove_member
                             list_groups group_members explain can_i load_grants
               access_tokens: mint rotate revoke list_tokens subjects_for_name
               enforced_access: GrantSet TokenStore SharedDoc  (what a server checks each request against)
               logins: ensure for_url login_for_url save_login forget_login token_path
                       (the local user's token and logins, per server address)
  daemons      daemons: enable disable status  (user services)
  workers      worker_fleet: worker_start list_workers queue verify failed parse_labels link_settings
               team_certs: create_ca issue_cert list_certs create_token revoke_token enrol  (certificate files)
               worker_tokens: create list_tokens revoke redeem lookup  (enrolment tokens)
  dashboard    dashboard_queries: workflow_runs workflows_overview approvals run_state workflow_graph step_labels
                                  input_form inputs_from_form data_version_text data_diff datastore_overview

tests/unit/test_app_catalog.py keeps this list true: every module of this
package is in it, and every name it lists exists."""
