"""One module per ``specscope`` subcommand, each with ``add_parser(subparsers)``.

:data:`specscope.app.cli.COMMANDS` names them; the command line imports only the
module of the command it runs.
"""
