/* The static parts of report.html: style and the renderer script (plain DOM + SVG, no
 * library, nothing loaded from the network). The script reads the DATA object the
 * exporter writes before it. */
#ifndef HWRT_REPORT_PAGE_H
#define HWRT_REPORT_PAGE_H

#define REPORT_CSS \
"body{font:13px/1.4 system-ui,sans-serif;margin:16px;color:#222}" \
"h1{font-size:20px}h2{font-size:16px;margin-top:24px}" \
"#verdict{border-left:4px solid #c33;background:#fdf3f3;padding:8px 12px}" \
"#verdict .headline{font-weight:600}" \
"table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:2px 6px;text-align:right}" \
"td.name,th.name{text-align:left}.bar{height:10px;background:#4e79a7}" \
".lane-label{font-size:11px;fill:#333}.group-label{font-size:12px;font-weight:600;fill:#000}" \
".legend span{display:inline-block;margin-right:12px}.legend i{display:inline-block;width:10px;" \
"height:10px;margin-right:4px}"

#define REPORT_JS \
"(function(){\n" \
"const CATS=['kernel','MemcpyHtoD','MemcpyDtoH','MemcpyDtoD','Memset','host callback','stream wait','launch','sync','offload'];\n" \
"const COLORS=['#4e79a7','#f28e2b','#e15759','#76b7b2','#59a14f','#edc948','#bab0ac','#9c755f','#ff9da7','#b07aa1'];\n" \
"const NS='http://www.w3.org/2000/svg';\n" \
"function el(tag,attrs,parent,text){const e=document.createElementNS(NS,tag);\n" \
" for(const k in attrs)e.setAttribute(k,attrs[k]);if(text!==undefined)e.textContent=text;\n" \
" if(parent)parent.appendChild(e);return e;}\n" \
"function h(tag,text,parent,cls){const e=document.createElement(tag);if(text!==undefined)e.textContent=text;\n" \
" if(cls)e.className=cls;if(parent)parent.appendChild(e);return e;}\n" \
"function fmt(us){return us>=1000?(us/1000).toFixed(2)+' ms':us.toFixed(1)+' us';}\n" \
"const S=DATA.stats;\n" \
"h('p','processes '+S.processes+' | events '+S.events+' | dropped '+S.dropped+' | launches '+S.launches+\n" \
"  ' | syncs '+S.syncs+' | device time '+S.device_ms.toFixed(3)+' ms (Memcpy '+S.memcpy_ms.toFixed(3)+\n" \
"  ' ms, kernels '+S.kernel_ms.toFixed(3)+' ms) | device idle '+S.idle_ms.toFixed(3)+' of '+S.span_ms.toFixed(3)+\n" \
"  ' ms | peak allocated '+S.peak_allocated_mb.toFixed(2)+' MB',document.getElementById('meta'));\n" \
"const V=document.getElementById('verdict');h('div','Verdict: '+DATA.verdict.headline,V,'headline');\n" \
"const ul=h('ul',undefined,V);for(const l of DATA.verdict.lines)h('li',l,ul,'advice');\n" \
"let t0=Infinity,t1=-Infinity;\n" \
"for(const L of DATA.lanes)for(const s of L.spans){if(s[0]<t0)t0=s[0];if(s[0]+s[1]>t1)t1=s[0]+s[1];}\n" \
"for(const M of DATA.mem)for(const p of M.pts){if(p[0]<t0)t0=p[0];if(p[0]>t1)t1=p[0];}\n" \
"if(!(t1>t0)){t0=0;t1=1;}\n" \
"const W=1200,LW=300,LH=18,PW=W-LW-10;\n" \
"function x(t){return LW+(t-t0)/(t1-t0)*PW;}\n" \
"const TL=document.getElementById('timeline');\n" \
"const leg=h('div',undefined,TL,'legend');CATS.forEach((c,i)=>{const s=h('span',undefined,leg);\n" \
" const b=h('i',undefined,s);b.style.background=COLORS[i];s.appendChild(document.createTextNode(c));});\n" \
"let rows=0,prevGroup=null;for(const L of DATA.lanes){if(L.group!==prevGroup){rows++;prevGroup=L.group;}rows++;}\n" \
"const svg=el('svg',{width:W,height:(rows+2)*LH,id:'timeline-svg'},TL);\n" \
"for(let i=0;i<=10;i++){const t=t0+(t1-t0)*i/10;el('line',{x1:x(t),x2:x(t),y1:0,y2:(rows+1)*LH,stroke:'#eee'},svg);\n" \
" el('text',{x:x(t),y:(rows+1.8)*LH,'font-size':10,'text-anchor':'middle'},svg,fmt(t));}\n" \
"let y=0,nspans=0;prevGroup=null;\n" \
"for(const L of DATA.lanes){\n" \
" if(L.group!==prevGroup){el('text',{x:4,y:y+13,class:'group-label'},svg,L.group);y+=LH;prevGroup=L.group;}\n" \
" const g=el('g',{class:'lane','data-lane':L.group+' / '+L.name,'data-kind':L.kind},svg);\n" \
" el('text',{x:14,y:y+13,class:'lane-label'},g,L.name);\n" \
" for(const s of L.spans){const r=el('rect',{x:x(s[0]).toFixed(2),y:y+2,width:Math.max(1,s[1]/(t1-t0)*PW).toFixed(2),\n" \
"  height:LH-4,fill:COLORS[s[3]],class:'span','data-cat':CATS[s[3]]},g);\n" \
"  if(nspans<4000)el('title',{},r,DATA.names[s[2]]+' '+fmt(s[1])+' at '+fmt(s[0]));nspans++;}\n" \
" y+=LH;}\n" \
"const MEM=document.getElementById('memory');let mpts=0;\n" \
"for(const M of DATA.mem){h('div',M.name+' (MB, allocated solid, reserved dashed)',MEM);\n" \
" const H=160,ms=el('svg',{width:W,height:H+20,class:'mem-chart'},MEM);\n" \
" let mx=0;for(const p of M.pts)mx=Math.max(mx,p[1],p[2]);if(mx<=0)mx=1;\n" \
" function yy(v){return 5+H-(v/mx)*H;}\n" \
" function path(i){let d='';let last=null;for(const p of M.pts){const X=x(p[0]).toFixed(1);\n" \
"  if(last===null)d+='M'+X+','+yy(p[i]).toFixed(1);else d+=' L'+X+','+yy(last).toFixed(1)+' L'+X+','+yy(p[i]).toFixed(1);last=p[i];}\n" \
"  return d;}\n" \
" el('path',{d:path(1),fill:'none',stroke:'#4e79a7','stroke-width':1.5,class:'mem-curve','data-points':M.pts.length},ms);\n" \
" el('path',{d:path(2),fill:'none',stroke:'#e15759','stroke-dasharray':'4 2',class:'mem-reserved'},ms);\n" \
" el('text',{x:4,y:14,'font-size':10},ms,'peak '+mx.toFixed(2)+' MB');\n" \
" el('text',{x:4,y:H+4,'font-size':10},ms,'0');mpts+=M.pts.length;}\n" \
"if(!DATA.mem.length)h('p','no device memory events were recorded',MEM);\n" \
"const OPS=document.getElementById('ops');const tb=h('table',undefined,OPS);tb.id='op-table';\n" \
"const hr=h('tr',undefined,tb);['time(%)','','total(us)','count','avg(us)','min(us)','max(us)','device','task type','op_name'].forEach((c,i)=>h('th',c,hr,i==9?'name':''));\n" \
"for(const o of DATA.ops){const r=h('tr',undefined,tb,'op-row');r.dataset.op=o.name;\n" \
" h('td',o.pct.toFixed(2),r);const bc=h('td',undefined,r);const b=h('div',undefined,bc,'bar');b.style.width=(o.pct*2)+'px';\n" \
" [o.total.toFixed(3),o.count,o.avg.toFixed(3),o.min.toFixed(3),o.max.toFixed(3),o.device,o.type].forEach(v=>h('td',String(v),r));\n" \
" h('td',o.name,r,'name');}\n" \
"const RS=document.getElementById('render-stats');\n" \
"RS.textContent='rendered lanes='+DATA.lanes.length+' spans='+nspans+' mem_points='+mpts+' ops='+DATA.ops.length;\n" \
"RS.dataset.lanes=DATA.lanes.length;RS.dataset.spans=nspans;RS.dataset.memPoints=mpts;RS.dataset.ops=DATA.ops.length;\n" \
"document.body.setAttribute('data-rendered','1');\n" \
"})();\n"

#endif
