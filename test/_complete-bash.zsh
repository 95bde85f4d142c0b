# Types each query and Tab into an interactive bash on a pseudo-terminal (zsh/zpty), as a
# user would, and prints the line readline made of it: the completion script as bash's
# readline runs it. Usage: zsh -f _complete-bash.zsh SCRIPT QUERY…
# Prints one line per query: the query, a tab, the completed line in brackets.
zmodload zsh/zpty
zpty b bash --norc --noprofile -i
# Ctrl-T prints the line being edited between marks; the marks are typed in pieces so that
# the terminal's echo of what was typed never holds them.
zpty -w b "PS1=''; source ${(q)1}; bind -x '\"\\C-t\": printf \"<L%s>%s<E>\\\\n\" 1 \"\$READLINE_LINE\"'; echo '<READ''Y>'"
zpty -r b out '*<READY>*'
shift
for query in "$@"; do
  zpty -w -n b "$query"$'\t\C-t'
  out=''
  while zpty -r -t b chunk || sleep 0.05; do
    out+=$chunk
    [[ $out == *'<L1>'*'<E>'* ]] && break
  done
  print -r -- "$query"$'\t'"[${${out##*<L1>}%%<E>*}]"
  zpty -w -n b $'\C-e\C-u'
done
zpty -d b
